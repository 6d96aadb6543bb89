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
"held" conversations were written after the rules were frozen and never tuned on, so their
figures are the honest ones."""

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
]
