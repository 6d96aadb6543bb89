"""A labelled set for the capability-gap rules (gaps/rules.py, issue 18), measured by
bench/gaps.py and floored by tests/gaps/test_rules.py.

Written by hand for this purpose (no real customer data): conversations of three agents —
a customer-support bot, an engineering assistant, a personal assistant — over Slack,
email, a CLI and a web chat.

Each conversation is a dict: `id`, `kind` (support | engineering | personal), `channel`
(slack | email | cli | web), `half`, and `turns`, a list of
`(direction, speaker, content)` or `(direction, speaker, content, labels)` with direction
"in" (a person to the agent), "out" (the agent) or "sys". A turn's id is its 1-based
position. Labels:
- `gap`: the need's key (a slug) — this turn shows a capability gap: the agent declined or
  could not do what was asked. The same slug in different conversations is the same need
  asked in other words by other people (for dedup);
- `category`: the expected category (informational: bench/gaps.py reports agreement);
- `policy`: the need's slug — the agent declined because of a rule it follows (not a gap);
- `metadata`: the turn's metadata (a tool error);
- `note`: why a hard negative is negative.

Decisions the labels encode:
- only the agent's turns can show a gap: a person's "I can't log in" is their problem,
  which the agent may solve;
- a refusal the agent takes back or fulfils in the same or a later turn is not a gap;
- "I couldn't find an order with that number" is a lookup that found nothing, not a gap;
- an offered alternative does not cancel the gap ("I can't do PDF, but CSV works");
- a tool error that a retry of the same tool made good is not a gap.

`half`: "dev" conversations were written first and the rules were tuned against them;
"held" conversations were written after that first version was frozen and measured blind
once (bench/RESULTS.md), then read to make the second version; "fresh" conversations were
written after the second version was frozen and never tuned on, so their figures are the
honest ones for the current rules."""

from __future__ import annotations

CONVERSATIONS: list[dict] = [
    # ---------------------------------------------------------------- dev half
    {"id": "support-invoices-pdf", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Maria Lopez", "Hi, I need copies of my invoices for our accountant."),
        ("out", "Acme Help", "Happy to help! Which months do you need?"),
        ("in", "Maria Lopez", "January to March. Could you export them as PDF please?"),
        ("out", "Acme Help", "Sorry, I can't export invoices as PDF yet. I can send you a CSV of the same invoices instead.",
         {"gap": "export-invoices-pdf", "category": "feature"}),
        ("in", "Maria Lopez", "CSV is fine, thanks."),
        ("out", "Acme Help", "Done, the CSV is on its way to maria@example.com."),
    ]},
    {"id": "support-idioms", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Tom Becker", "The new dashboard is brilliant, I can't wait to show my team."),
        ("out", "Acme Help", "That's great to hear! I can't wait for you to try the reports too.",
         {"note": "idiom"}),
        ("in", "Tom Becker", "Honestly can't complain, support has been fast."),
        ("out", "Acme Help", "I can't thank you enough for the kind words. Anything else I can do?", {"note": "politeness"}),
        ("in", "Tom Becker", "No, all good."),
        ("out", "Acme Help", "Have a lovely day!"),
    ]},
    {"id": "support-login-user-problem", "kind": "support", "channel": "email", "half": "dev", "turns": [
        ("in", "Priya Nair", "Hello, I can't log in since this morning, it says my password is wrong.",
         {"note": "a user's own problem, inbound"}),
        ("out", "Acme Support", "Sorry about that! I've sent a password reset link to your address; it is valid for an hour."),
        ("in", "Priya Nair", "Got it, but I still cannot access the billing page."),
        ("out", "Acme Support", "Your account was on the viewer role. I've asked your admin to grant billing access and they approved it, so it should work now."),
        ("in", "Priya Nair", "It works, thank you!"),
    ]},
    {"id": "support-passwords-policy", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Kevin O'Brien", "I forgot the password of our shared admin account. What is it?"),
        ("out", "Acme Help", "I'm not allowed to share passwords, even for shared accounts. I can send a reset link to the account owner.",
         {"policy": "share-password"}),
        ("in", "Kevin O'Brien", "Fine, send it to Laura then."),
        ("out", "Acme Help", "Done, Laura has a reset link."),
    ]},
    {"id": "support-refund-fulfilled", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Aisha Bello", "Can you refund my last order? It arrived broken."),
        ("out", "Acme Help", "I'm unable to refund orders older than 30 days from here... actually, I was able to do it: your order is 12 days old. The refund of $42.10 is on its way.",
         {"note": "refusal taken back in the same turn"}),
        ("in", "Aisha Bello", "Brilliant, thanks."),
    ]},
    {"id": "support-order-not-found", "kind": "support", "channel": "email", "half": "dev", "turns": [
        ("in", "Jonas Weber", "Where is my order 88123?"),
        ("out", "Acme Support", "I couldn't find an order with that number. Could you check the confirmation email?",
         {"note": "a lookup that found nothing"}),
        ("in", "Jonas Weber", "Sorry, it's 88132."),
        ("out", "Acme Support", "Found it: it ships tomorrow with DHL."),
    ]},
    {"id": "support-change-address", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Lena Fischer", "I moved last week."),
        ("out", "Acme Help", "Congratulations on the move! How can I help?"),
        ("in", "Lena Fischer", "Please change the delivery address on my open order to Hauptstrasse 5, Berlin."),
        ("out", "Acme Help", "Unfortunately there's no way for me to change the address of an order that has already been packed.",
         {"gap": "change-order-address", "category": "feature"}),
        ("in", "Lena Fischer", "Oh no. What can I do?"),
        ("out", "Acme Help", "You can refuse the parcel and we'll resend it to the new address at no cost."),
    ]},
    {"id": "support-invoices-pdf-2", "kind": "support", "channel": "email", "half": "dev", "turns": [
        ("in", "Ravi Shah", "Good morning, is it possible to download our invoices in PDF format? Our auditor insists."),
        ("out", "Acme Support", "Good morning Ravi. PDF download of invoices isn't supported at the moment, only CSV and the web view.",
         {"gap": "export-invoices-pdf", "category": "feature"}),
        ("in", "Ravi Shah", "That's a shame. Please pass it on to the product team."),
        ("out", "Acme Support", "I will. I couldn't agree more that it's needed.", {"note": "idiom"}),
    ]},
    {"id": "support-zendesk-tool-error", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Chloe Martin", "Could you open a ticket for the broken checkout button?"),
        ("out", "Acme Help", "Let me create that ticket for you.",
         {"gap": "open-support-ticket", "category": "tool_error",
          "metadata": {"tool_error": {"tool": "zendesk.create_ticket", "error": "503 Service Unavailable"}}}),
        ("out", "Acme Help", "The ticket system didn't respond. I've noted your report and a colleague will follow up by email."),
        ("in", "Chloe Martin", "Ok."),
    ]},
    {"id": "support-retry-ok", "kind": "support", "channel": "web", "half": "dev", "turns": [
        ("in", "Marco Rossi", "Can you check the status of my subscription?"),
        ("out", "Acme Help", "One moment.",
         {"metadata": {"tool_error": {"tool": "billing.lookup", "error": "timeout after 5 s"}},
          "note": "the same tool succeeded on a retry"}),
        ("out", "Acme Help", "Your Pro subscription renews on 3 March.", {"metadata": {"tool": "billing.lookup"}}),
        ("in", "Marco Rossi", "Perfect."),
    ]},
    {"id": "support-other-customer", "kind": "support", "channel": "email", "half": "dev", "turns": [
        ("in", "Hannah Cole", "My colleague Ben placed an order yesterday. Can you tell me his delivery address?"),
        ("out", "Acme Support", "For privacy reasons I can't share another customer's details. Ben can see the address in his own account.",
         {"policy": "share-customer-data"}),
        ("in", "Hannah Cole", "Understood."),
    ]},
    {"id": "eng-deploy-permission", "kind": "engineering", "channel": "slack", "half": "dev", "turns": [
        ("in", "sam.k", "@devbot can you deploy build 4821 to production?"),
        ("out", "devbot", "I don't have permission to deploy to production; my token only covers staging.",
         {"gap": "deploy-production", "category": "permission"}),
        ("in", "sam.k", "ugh ok. deploy it to staging then"),
        ("out", "devbot", "Deployed 4821 to staging. Smoke tests are green."),
        ("in", "sam.k", "nice, can't complain"),
    ]},
    {"id": "eng-jira", "kind": "engineering", "channel": "slack", "half": "dev", "turns": [
        ("in", "nina.p", "devbot, file a Jira ticket for the flaky test in payments"),
        ("out", "devbot", "I'm not connected to Jira yet, so I can't file tickets there. I can draft the ticket text for you to paste.",
         {"gap": "create-jira-ticket", "category": "integration"}),
        ("in", "nina.p", "please do"),
        ("out", "devbot", "Here it is:\nTitle: Flaky test payments/test_refund_retry\nBody: fails ~1 in 20 runs on CI since #4410."),
    ]},
    {"id": "eng-logs-access", "kind": "engineering", "channel": "cli", "half": "dev", "turns": [
        ("in", "alex", "why did the nightly job fail?"),
        ("out", "mnemo-cli", "I can't read the production logs from this machine, I only see the CI output. The CI step failed on a migration timeout.",
         {"gap": "read-production-logs", "category": "data_access"}),
        ("in", "alex", "ok, rerun the migration with a longer timeout"),
        ("out", "mnemo-cli", "Rerun started with a 600 s timeout. It finished in 212 s."),
    ]},
    {"id": "eng-believe-agree", "kind": "engineering", "channel": "slack", "half": "dev", "turns": [
        ("in", "rob.t", "the build went from 14 min to 3 min after your cache change"),
        ("out", "devbot", "I can't believe it made that much difference! The dependency layer was being rebuilt every time.",
         {"note": "idiom"}),
        ("in", "rob.t", "we should cache the test DB too"),
        ("out", "devbot", "I couldn't agree more. I've opened PR #512 that does it.", {"note": "idiom"}),
    ]},
    {"id": "eng-merge-fulfilled-next", "kind": "engineering", "channel": "slack", "half": "dev", "turns": [
        ("in", "jo.m", "devbot please merge PR #733"),
        ("out", "devbot", "I can't merge #733 while a required check is pending.",
         {"note": "a pending check, fulfilled in the next turn"}),
        ("out", "devbot", "Update: the check passed and I was able to merge #733."),
        ("in", "jo.m", "thx"),
    ]},
    {"id": "eng-rotate-secret-policy", "kind": "engineering", "channel": "cli", "half": "dev", "turns": [
        ("in", "dana", "print the value of STRIPE_SECRET_KEY"),
        ("out", "mnemo-cli", "I won't reveal secret values in the terminal. I can tell you which vault path it comes from.",
         {"policy": "reveal-secret"}),
        ("in", "dana", "fine, which path?"),
        ("out", "mnemo-cli", "secret/prod/payments/stripe."),
    ]},
    {"id": "eng-gpu-cluster", "kind": "engineering", "channel": "email", "half": "dev", "turns": [
        ("in", "Wei Chen", "Hi, could you kick off the benchmark on the GPU cluster and send me the numbers tomorrow?"),
        ("out", "Eng Assistant", "Hi Wei, I'm not able to start jobs on the GPU cluster; I only have access to the CPU runners. I can run the CPU benchmark tonight if that helps.",
         {"gap": "run-gpu-benchmark", "category": "permission"}),
        ("in", "Wei Chen", "Yes please, the CPU one then."),
        ("out", "Eng Assistant", "Scheduled for 22:00, results by 8:00."),
    ]},
    {"id": "personal-calendar", "kind": "personal", "channel": "web", "half": "dev", "turns": [
        ("in", "Julia", "Can you book a table for two at Luigi's on Friday and add it to my calendar?"),
        ("out", "Pal", "I booked Luigi's for two on Friday at 19:30. I don't have access to your calendar, though, so you'll need to add it yourself.",
         {"gap": "access-calendar", "category": "data_access"}),
        ("in", "Julia", "I can't believe you remembered I like 19:30, thanks!"),
        ("out", "Pal", "You're welcome!"),
    ]},
    {"id": "personal-uber", "kind": "personal", "channel": "web", "half": "dev", "turns": [
        ("in", "Omar", "Order me an Uber to the airport at 6am tomorrow"),
        ("out", "Pal", "I don't have an integration with Uber, so I can't order rides. Would you like a reminder at 5:30 to book one?",
         {"gap": "order-ride", "category": "integration"}),
        ("in", "Omar", "yes please"),
        ("out", "Pal", "Reminder set for 5:30."),
    ]},
    {"id": "personal-wait", "kind": "personal", "channel": "web", "half": "dev", "turns": [
        ("in", "Sofia", "Remind me to call mum on Sunday"),
        ("out", "Pal", "Reminder set for Sunday at 10:00: call mum."),
        ("in", "Sofia", "Thanks! Also I can't find my passport anywhere, ugh.", {"note": "a user's own problem"}),
        ("out", "Pal", "Oh no. Last time you said you keep documents in the blue folder in the study, maybe it's there?"),
        ("in", "Sofia", "Found it! I can't thank you enough."),
        ("out", "Pal", "Ha, I can't take the credit, you found it. Enjoy the trip!", {"note": "politeness"}),
    ]},
    {"id": "personal-bank", "kind": "personal", "channel": "email", "half": "dev", "turns": [
        ("in", "Martin", "Hi Pal, could you pay the electricity bill from my bank account before the 15th?"),
        ("out", "Pal", "Hi Martin, I'm afraid I can't make payments from your bank account; I have no way to connect to your bank. I've put a reminder on the 12th.",
         {"gap": "pay-bills", "category": "integration"}),
        ("in", "Martin", "Ok, thanks."),
    ]},
    {"id": "personal-spotify-tool", "kind": "personal", "channel": "web", "half": "dev", "turns": [
        ("in", "Ines", "Play my running playlist"),
        ("out", "Pal", "Starting your running playlist…",
         {"gap": "play-music", "category": "tool_error",
          "metadata": {"tool_error": "spotify: 401 token expired"}}),
        ("out", "Pal", "Sorry, the music service refused the request. You may need to sign in to Spotify again in the settings."),
    ]},

    # ---------------------------------------------------------------- held-out half
    # Written after the rules were frozen; not tuned on.
    {"id": "held-support-pdf-statement", "kind": "support", "channel": "email", "half": "held", "turns": [
        ("in", "Greta Holm", "Dear support, our finance team needs every invoice from 2024 as a PDF file. Can you send them over?"),
        ("out", "Acme Support", "Dear Greta, thank you for reaching out. I'm not able to generate PDF invoices at the moment — our billing system only produces CSV exports and the online view.",
         {"gap": "export-invoices-pdf", "category": "feature"}),
        ("in", "Greta Holm", "Our auditors won't accept CSV. Is there anything else you can do?"),
        ("out", "Acme Support", "I've raised it with the billing team and flagged your account so you're told as soon as PDF invoices are available. Sorry I can't be of more help today.",
         {"note": "a courtesy restatement of the same refusal; labelled on turn 2 only"}),
        ("in", "Greta Holm", "Thanks, please do keep me posted."),
        ("out", "Acme Support", "Will do. Have a good week!"),
    ]},
    {"id": "held-support-cancel-sub", "kind": "support", "channel": "web", "half": "held", "turns": [
        ("in", "Leo Park", "hey"),
        ("out", "Acme Help", "Hi Leo! What can I do for you today?"),
        ("in", "Leo Park", "i want to cancel my subscription"),
        ("out", "Acme Help", "I'm sorry to see you go. Could you tell me the email on the account?"),
        ("in", "Leo Park", "leo.park@example.com"),
        ("out", "Acme Help", "Thanks. Cancelling a subscription isn't something I can do from this chat — it has to go through the account owner's billing page. I can send you the direct link.",
         {"gap": "cancel-subscription", "category": "feature"}),
        ("in", "Leo Park", "ok send it"),
        ("out", "Acme Help", "Here you go: https://acme.example/billing/cancel"),
    ]},
    {"id": "held-support-cancel-sub-2", "kind": "support", "channel": "email", "half": "held", "turns": [
        ("in", "Beatriz Souza", "Please cancel our team plan at the end of this month. We are moving to another tool."),
        ("out", "Acme Support", "Hello Beatriz, unfortunately I cannot cancel plans on behalf of customers. Only an admin of your workspace can do it under Settings → Billing.",
         {"gap": "cancel-subscription", "category": "permission"}),
        ("in", "Beatriz Souza", "I am the admin, but fine."),
        ("out", "Acme Support", "Thank you for your understanding, and I can't help but say we'll miss you!", {"note": "idiom"}),
    ]},
    {"id": "held-support-phone-lookup", "kind": "support", "channel": "web", "half": "held", "turns": [
        ("in", "Nadia Petrova", "I can't remember which email I signed up with. Can you look it up by my phone number +44 7700 900123?",
         {"note": "a user's own problem, inbound"}),
        ("out", "Acme Help", "For security reasons I'm not permitted to reveal account details based on a phone number alone. If you reply with your last order number, I can verify you.",
         {"policy": "share-customer-data"}),
        ("in", "Nadia Petrova", "Order 55120"),
        ("out", "Acme Help", "Thanks, verified. You signed up with n.petrova@example.org."),
    ]},
    {"id": "held-support-language", "kind": "support", "channel": "web", "half": "held", "turns": [
        ("in", "Kenji Sato", "Do you have support in Japanese?"),
        ("out", "Acme Help", "I only speak English and Spanish for now, I'm afraid. I've noted that you'd prefer Japanese.",
         {"gap": "support-in-japanese", "category": "feature"}),
        ("in", "Kenji Sato", "OK, English is fine. My export job has been stuck for two hours."),
        ("out", "Acme Help", "I see it. The job hit a timeout. I restarted it and it has now finished, you should have the file in your inbox."),
        ("in", "Kenji Sato", "Got it, you're a lifesaver, I can't thank you enough."),
        ("out", "Acme Help", "Glad I could help!"),
    ]},
    {"id": "held-support-bulk-edit", "kind": "support", "channel": "slack", "half": "held", "turns": [
        ("in", "ops-emma", "@acme-bot is there a way to bulk edit the prices of 300 products at once?"),
        ("out", "acme-bot", "Not from here, sorry: bulk price edits aren't supported in the bot. You can upload a CSV in the catalogue screen, which updates them in one go.",
         {"gap": "bulk-edit-prices", "category": "feature"}),
        ("in", "ops-emma", "csv works. can you give me the template?"),
        ("out", "acme-bot", "Sure, here is the template: https://acme.example/templates/prices.csv"),
    ]},
    {"id": "held-support-refund-policy", "kind": "support", "channel": "email", "half": "held", "turns": [
        ("in", "Paul Dubois", "I bought the annual plan 5 months ago and barely used it. I'd like a full refund."),
        ("out", "Acme Support", "Hello Paul, I understand. Under our refund policy I can't issue refunds after 30 days, but I can switch you to the monthly plan from your next renewal.",
         {"policy": "refund-after-30-days"}),
        ("in", "Paul Dubois", "That's disappointing. Do the switch then."),
        ("out", "Acme Support", "Done: from 14 June you'll be on the monthly plan."),
    ]},
    {"id": "held-support-tool-crm", "kind": "support", "channel": "web", "half": "held", "turns": [
        ("in", "Ola Nordmann", "Can you update my company name to Nordmann AS on my account?"),
        ("out", "Acme Help", "Updating it now.",
         {"gap": "update-account-details", "category": "tool_error",
          "metadata": {"tool_error": {"tool": "crm.update_account", "error": "403 Forbidden: field company_name is read-only"}}}),
        ("out", "Acme Help", "Hmm, that didn't go through on my side. I've passed it to our accounts team, who will change it within a day."),
        ("in", "Ola Nordmann", "ok"),
    ]},
    {"id": "held-eng-prod-deploy", "kind": "engineering", "channel": "slack", "half": "held", "turns": [
        ("in", "marta.g", "hey devbot, ship release 2.14.0 to prod please"),
        ("out", "devbot", "Sorry, deploying to prod is outside what I can do — prod deploys need a human approver in our pipeline. I've opened the release PR and pinged #release-approvers.",
         {"gap": "deploy-production", "category": "permission"}),
        ("in", "marta.g", "fair. can you at least tag the release?"),
        ("out", "devbot", "Tagged v2.14.0 on main."),
        ("in", "marta.g", "ty"),
    ]},
    {"id": "held-eng-github-actions", "kind": "engineering", "channel": "cli", "half": "held", "turns": [
        ("in", "kim", "rerun the failed github actions job on my branch"),
        ("out", "mnemo-cli", "Rerunning workflow 'ci' on branch kim/fix-cache…",
         {"gap": "rerun-ci-job", "category": "tool_error",
          "metadata": {"tool_error": {"tool": "github.rerun_workflow", "error": "Resource not accessible by integration"}}}),
        ("out", "mnemo-cli", "GitHub refused the rerun: the token lacks the actions:write scope."),
        ("in", "kim", "whatever, I'll click it myself"),
    ]},
    {"id": "held-eng-sentry", "kind": "engineering", "channel": "slack", "half": "held", "turns": [
        ("in", "li.wen", "devbot what's the top error in sentry since the last deploy?"),
        ("out", "devbot", "I don't have access to Sentry, so I can't see the error feed. If you paste the issue link I can help dig into it.",
         {"gap": "read-error-tracker", "category": "integration"}),
        ("in", "li.wen", "https://sentry.example/issues/8812 — NullPointer in InvoiceRenderer"),
        ("out", "devbot", "From the stack trace it's the missing currency on legacy invoices; PR #902 adds a default."),
    ]},
    {"id": "held-eng-refactor-wait", "kind": "engineering", "channel": "cli", "half": "held", "turns": [
        ("in", "jonas", "rename the function parse_cfg to parse_config everywhere"),
        ("out", "mnemo-cli", "Renamed in 14 files; tests pass."),
        ("in", "jonas", "I can't believe that worked first try", {"note": "idiom, inbound"}),
        ("out", "mnemo-cli", "Me neither, honestly. I can't stress enough how much the type hints helped.",
         {"note": "idiom"}),
        ("in", "jonas", "now squash the last 3 commits"),
        ("out", "mnemo-cli", "Squashed into one commit: 'Rename parse_cfg to parse_config'."),
    ]},
    {"id": "held-eng-db-access", "kind": "engineering", "channel": "email", "half": "held", "turns": [
        ("in", "Fatima Zahra", "Hi, could you run a query on the production database to count users who signed up in May?"),
        ("out", "Eng Assistant", "Hi Fatima, I'm unable to query the production database directly; I only have read access to the analytics replica, which is a day behind. On the replica, 4,812 users signed up in May.",
         {"gap": "query-production-db", "category": "data_access"}),
        ("in", "Fatima Zahra", "A day behind is fine for May. Thanks!"),
    ]},
    {"id": "held-eng-jira-2", "kind": "engineering", "channel": "slack", "half": "held", "turns": [
        ("in", "pete.r", "@devbot create a jira issue: checkout page 500s on empty cart"),
        ("out", "devbot", "We don't have a Jira integration set up for me yet. Want me to post it in #bugs instead?",
         {"gap": "create-jira-ticket", "category": "integration"}),
        ("in", "pete.r", "yes"),
        ("out", "devbot", "Posted in #bugs with the repro steps."),
    ]},
    {"id": "held-eng-fulfilled", "kind": "engineering", "channel": "cli", "half": "held", "turns": [
        ("in", "ana", "generate a coverage report for the payments module"),
        ("out", "mnemo-cli", "I can't run coverage here, pytest-cov isn't installed in this environment.",
         {"note": "fulfilled in the next turns"}),
        ("in", "ana", "install it then"),
        ("out", "mnemo-cli", "Installed pytest-cov 5.0. Running coverage now."),
        ("out", "mnemo-cli", "Done: payments module coverage is 87% (report in htmlcov/index.html)."),
    ]},
    {"id": "held-personal-calendar-2", "kind": "personal", "channel": "email", "half": "held", "turns": [
        ("in", "Robert", "Pal, what does my Thursday look like? Anything before noon?"),
        ("out", "Pal", "I can't see your calendar, Robert — it hasn't been connected to me. If you forward me the invite emails I can keep track of them.",
         {"gap": "access-calendar", "category": "data_access"}),
        ("in", "Robert", "Ugh, ok. How do I connect it?"),
        ("out", "Pal", "Open Settings → Connections and choose your calendar provider."),
    ]},
    {"id": "held-personal-calendar-3", "kind": "personal", "channel": "web", "half": "held", "turns": [
        ("in", "Amara", "Move my dentist appointment to next Tuesday"),
        ("out", "Pal", "I don't have a way to change events in your calendar yet. I can draft a message to the dentist asking to reschedule, if you like.",
         {"gap": "access-calendar", "category": "data_access"}),
        ("in", "Amara", "please do"),
        ("out", "Pal", "Here's a draft: 'Hello, could we move my appointment on the 4th to Tuesday the 9th? Thanks, Amara'"),
        ("in", "Amara", "perfect, can't complain about that"),
    ]},
    {"id": "held-personal-ride", "kind": "personal", "channel": "web", "half": "held", "turns": [
        ("in", "Diego", "Could you get me a taxi to the station for 7:15?"),
        ("out", "Pal", "Booking taxis isn't possible for me — I'm not hooked up to any ride service. I can remind you at 6:55 to call one.",
         {"gap": "order-ride", "category": "integration"}),
        ("in", "Diego", "no thanks, I'll walk"),
    ]},
    {"id": "held-personal-chat-idioms", "kind": "personal", "channel": "slack", "half": "held", "turns": [
        ("in", "Mei", "Guess what, I got the job!!"),
        ("out", "Pal", "Congratulations, Mei! I couldn't be happier for you."),
        ("in", "Mei", "I can't stop smiling"),
        ("out", "Pal", "You earned it. I can't imagine a better fit for you than that team.", {"note": "idiom"}),
        ("in", "Mei", "Remind me to send a thank-you note to Clara tomorrow"),
        ("out", "Pal", "Reminder set for tomorrow at 9:00: thank-you note to Clara."),
    ]},
    {"id": "held-personal-medical", "kind": "personal", "channel": "web", "half": "held", "turns": [
        ("in", "Henrik", "My chest has been hurting since last night, what medication should I take?"),
        ("out", "Pal", "I'm not allowed to give medical advice. Chest pain can be serious: please call your doctor or emergency services now.",
         {"policy": "medical-advice"}),
        ("in", "Henrik", "ok calling"),
    ]},
    {"id": "held-personal-pay-rent", "kind": "personal", "channel": "email", "half": "held", "turns": [
        ("in", "Yusuf", "Hi Pal, please transfer this month's rent, €950, to my landlord."),
        ("out", "Pal", "Hi Yusuf, I have no access to your bank, so I can't send money. I've added a reminder for the 1st with the landlord's IBAN from your notes.",
         {"gap": "pay-bills", "category": "integration"}),
        ("in", "Yusuf", "Thanks Pal."),
    ]},
    {"id": "held-personal-weather-tool", "kind": "personal", "channel": "web", "half": "held", "turns": [
        ("in", "Clara", "What's the weather going to be like in Lisbon this weekend?"),
        ("out", "Pal", "Let me check the forecast.",
         {"gap": "weather-forecast", "category": "tool_error",
          "metadata": {"tool_error": {"tool": "weather.forecast", "error": "upstream timeout"}}}),
        ("out", "Pal", "The forecast service isn't answering right now. Try me again in a few minutes?"),
        ("in", "Clara", "sure"),
    ]},
    {"id": "held-personal-translate-ok", "kind": "personal", "channel": "web", "half": "held", "turns": [
        ("in", "Ivan", "Can you translate this letter from my landlord into English? It's in Czech."),
        ("out", "Pal", "Of course. Here it is: 'Dear tenant, the water will be off on Monday from 9 to 12.'"),
        ("in", "Ivan", "Great. I couldn't have done it without you."),
        ("out", "Pal", "Any time!"),
    ]},
    # ---------------------------------------------------------------- fresh half
    # Written after the second version of the rules was frozen (which had been tuned on the
    # dev and held halves); never tuned on.
    {"id": "fresh-support-export-excel", "kind": "support", "channel": "web", "half": "fresh", "turns": [
        ("in", "Ahmed Karim", "Hello! I'd like all my invoices from last year in one PDF for the tax office."),
        ("out", "Acme Help", "Hi Ahmed! Generating a combined PDF of invoices is not something I can do yet. You can print each invoice from the billing page to PDF in your browser.",
         {"gap": "export-invoices-pdf", "category": "feature"}),
        ("in", "Ahmed Karim", "All 48 of them, one by one? Seriously?"),
        ("out", "Acme Help", "I know, I'm sorry. I've logged your request with the product team so you hear when bulk PDF export arrives."),
    ]},
    {"id": "fresh-support-delete-account", "kind": "support", "channel": "email", "half": "fresh", "turns": [
        ("in", "Sven Olsen", "Delete my account and all my data, please. GDPR."),
        ("out", "Acme Support", "Hello Sven, I've started the deletion. Your account and data will be erased within 30 days, and you'll receive a confirmation by email."),
        ("in", "Sven Olsen", "Good. Can't say I'll miss the newsletter."),
        ("out", "Acme Support", "Ha, understood! Take care."),
    ]},
    {"id": "fresh-support-card-number", "kind": "support", "channel": "web", "half": "fresh", "turns": [
        ("in", "Rosa Jimenez", "Can you read me back the card number you have on file? I need it for my records."),
        ("out", "Acme Help", "For your protection I never share full card numbers. I can tell you it's a Visa ending in 4417, expiring 08/27.",
         {"policy": "share-card-number"}),
        ("in", "Rosa Jimenez", "That's enough, thank you."),
    ]},
    {"id": "fresh-support-live-agent", "kind": "support", "channel": "web", "half": "fresh", "turns": [
        ("in", "Gary Moore", "This bot is useless. I can't get a straight answer."),
        ("out", "Acme Help", "I'm sorry it's been frustrating. What are you trying to do?"),
        ("in", "Gary Moore", "Transfer me to a human agent."),
        ("out", "Acme Help", "I can't transfer chats to a person at the moment; live support is only available by phone, 9 to 5, on +1 555 0100.",
         {"gap": "handoff-to-human", "category": "feature"}),
        ("in", "Gary Moore", "Whatever."),
    ]},
    {"id": "fresh-support-shopify-sync", "kind": "support", "channel": "slack", "half": "fresh", "turns": [
        ("in", "store-ops", "@acme-bot could you sync our stock levels with Shopify every hour?"),
        ("out", "acme-bot", "Syncing with Shopify isn't available to me — there's no Shopify connector in this workspace yet. An admin can install it from the Apps page.",
         {"gap": "sync-shopify", "category": "integration"}),
        ("in", "store-ops", "ok asking IT"),
    ]},
    {"id": "fresh-eng-k8s-logs", "kind": "engineering", "channel": "cli", "half": "fresh", "turns": [
        ("in", "raj", "tail the logs of the payments pod in prod"),
        ("out", "mnemo-cli", "kubectl failed: you need the prod kubeconfig, which this CLI doesn't have.",
         {"gap": "read-production-logs", "category": "tool_error",
          "metadata": {"tool_error": {"tool": "kubectl.logs", "error": "error: You must be logged in to the server (Unauthorized)"}}}),
        ("in", "raj", "ok show me staging then"),
        ("out", "mnemo-cli", "Streaming logs of payments-7c9f in staging…"),
    ]},
    {"id": "fresh-eng-code-review", "kind": "engineering", "channel": "slack", "half": "fresh", "turns": [
        ("in", "eva.s", "devbot can you review PR #1201 and approve it if it looks fine?"),
        ("out", "devbot", "I've reviewed #1201: two nits on naming, otherwise looks good. I'm not able to approve PRs, though — approvals have to come from a CODEOWNER.",
         {"policy": "approve-pull-request"}),
        ("in", "eva.s", "np, I'll approve"),
        ("out", "devbot", "Thanks, I can't wait to see this one land, it removes 2k lines.", {"note": "idiom"}),
    ]},
    {"id": "fresh-eng-flamegraph", "kind": "engineering", "channel": "email", "half": "fresh", "turns": [
        ("in", "Tomasz Nowak", "Hi, would you mind profiling the export endpoint and sending me a flamegraph?"),
        ("out", "Eng Assistant", "Hi Tomasz, I don't have a profiler installed on the staging hosts, so I can't produce a flamegraph there. I ran the endpoint with timing logs instead: 78% of the time is in the PDF renderer.",
         {"gap": "profile-endpoint", "category": "feature"}),
        ("in", "Tomasz Nowak", "Useful anyway, thanks."),
    ]},
    {"id": "fresh-eng-translate-fulfilled", "kind": "engineering", "channel": "slack", "half": "fresh", "turns": [
        ("in", "hiro.t", "devbot can you summarise the RFC in #design for me?"),
        ("out", "devbot", "I cannot read #design, I haven't been invited to that channel."),
        ("in", "hiro.t", "invited you now"),
        ("out", "devbot", "Thanks, I'm in. Here is the summary of the RFC: move sessions to Redis, keep a 7-day TTL, and drop the sticky load balancer.",
         {"note": "the refusal on turn 2 was fulfilled on turn 4"}),
    ]},
    {"id": "fresh-personal-flight-checkin", "kind": "personal", "channel": "web", "half": "fresh", "turns": [
        ("in", "Lucia", "Check me in for my flight to Rome tomorrow."),
        ("out", "Pal", "I'm unable to check in with airlines on your behalf. Check-in opens at 7:40, shall I remind you then?",
         {"gap": "flight-check-in", "category": "integration"}),
        ("in", "Lucia", "yes"),
        ("out", "Pal", "Reminder set for 7:40."),
        ("in", "Lucia", "you're the best, I can't believe how organised I am now"),
    ]},
    {"id": "fresh-personal-photos", "kind": "personal", "channel": "email", "half": "fresh", "turns": [
        ("in", "Grace", "Pal, find the photos from my sister's wedding and make an album."),
        ("out", "Pal", "I don't have access to your photo library, Grace. If you upload the pictures here I'll put the album together.",
         {"gap": "access-photo-library", "category": "data_access"}),
        ("in", "Grace", "Uploaded 64 photos."),
        ("out", "Pal", "Here's the album 'Anna & Luca, June 2025', 64 photos in date order."),
    ]},
    {"id": "fresh-personal-calendar-4", "kind": "personal", "channel": "slack", "half": "fresh", "turns": [
        ("in", "Nils", "when is my next meeting with Karen?"),
        ("out", "Pal", "There's no way for me to check your calendar — it isn't connected. Last week you mentioned a call with Karen on Thursday at 3 pm.",
         {"gap": "access-calendar", "category": "data_access"}),
        ("in", "Nils", "right, thanks"),
    ]},
    {"id": "fresh-personal-small-talk", "kind": "personal", "channel": "web", "half": "fresh", "turns": [
        ("in", "Tariq", "I can't sleep, too much coffee"),
        ("out", "Pal", "Oh no! Maybe some herbal tea and no screens for a bit?"),
        ("in", "Tariq", "can't hurt to try"),
        ("out", "Pal", "Exactly. And I can't promise it works, but a short walk often helps too.", {"note": "hedge"}),
        ("in", "Tariq", "haha ok. remind me to buy decaf tomorrow"),
        ("out", "Pal", "Reminder set for tomorrow at 10:00: buy decaf."),
    ]},
]
