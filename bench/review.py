"""Review queue benchmark (issue: review queue): the HTML queue page over 10,000 pending
items (server p95 <= 150 ms) and bulk approval of 500 items through the API (<= 2 s).

    .venv/bin/python bench/review.py [--items 10000 --bulk 500 --batches 3 --requests 100] [--json out.json]
    .venv/bin/python bench/review.py --items 500 --bulk 100 --requests 20                   # about two minutes

1. A throw-away Mnemo (bench/harness.py: the real launcher, a fresh embedded PostgreSQL,
   gunicorn, Celery worker and beat), bootstrap workspace `default`.
2. Generation through the real services, in a `manage.py shell` against that instance's
   database (this file's generate_in_django()): interactions logged with
   conversations.services.interactions_log from 12 speakers on slack/chat/email, spread over
   the last 14 days (1-5 statements each); every statement becomes one pending item whose
   quote is that sentence of the interaction (exact start/end offsets): ~94% memory
   candidates through memory.services.memory_store (certainty "inferred", confidence
   0.5-0.85, third-person text naming the speaker, shaped like the LLM extractor's output:
   the default trust policy keeps them as candidates, each opens a "memory" review item),
   ~3% entity candidates (entities.services.entity_propose, kind project) and ~3% profile
   value candidates (entities.services.profile_candidate_add). Texts are distinct (memory_store
   would reinforce a repeat). Then the worker does its normal background processing of the
   interactions (embeddings, rule extraction, which adds some items of its own, episodes,
   summaries) and embeds the new memories, folding near duplicates (cosine >= 0.9) into the
   older memory, which withdraws their review items. The script waits for /api/v1/status
   to be idle (and to stay idle --settle seconds). Round 1 generates 60% of --items; the
   pending items per statement it led to size round 2, and a round 3 tops up when still
   short; the pending count measured against (GET /api/v1/candidates) is reported.
3. A user with the reviewer role in the workspace logs in through /login/ (a real session
   cookie); sequential GETs, after --warmup requests each: the queue page (first page,
   ?page=2, ?kind=memory, and the first page as the htmx partial a filter chip fetches) and
   the similar-items fragment /w/<slug>/review/<id>/similar/ of
   --fragments different pending memory items. Server = the `Server-Timing: app;dur=` header
   (the whole request inside Django); client = wall time around the HTTP call.
4. Bulk approval: --batches POSTs of --bulk distinct pending ids (oldest first, so none is on
   the queue's first page) to /api/v1/candidates/promote; wall and server time each, and a
   check that every id was decided and none skipped.

The client runs on the same machine and competes with the server for the CPU. With --keep
the instance stays up after the report (URL, key, var dir and the reviewer's login printed)
for a look at the data, until Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PARAMS_ENV = "MNEMO_BENCH_REVIEW"
RESULT_PREFIX = "BENCH-RESULT "
TARGET_PAGE_P95_MS = 150
TARGET_BULK_S = 2.0
# A word few items mention (one of the generated names): a search that finds a page or less.
RARE_WORD = "Quinn"
_TIMING = re.compile(r"app;dur=([0-9.]+)")

# --- texts ------------------------------------------------------------------------------------

SPEAKERS = [  # (sender name, channel, channel id)
    ("Ada Moreau", "slack", "U01ADA"), ("Ben Okafor", "slack", "U02BEN"), ("Chen Wei", "slack", "U03CHEN"),
    ("Dara Novak", "chat", "dara.novak"), ("Emeka Obi", "chat", "emeka"), ("Farah Haddad", "email", "farah@example.org"),
    ("Goran Petrov", "slack", "U07GORAN"), ("Hana Sato", "chat", "hana.s"), ("Ines Costa", "email", "ines@example.net"),
    ("Jonas Berg", "slack", "U10JONAS"), ("Kiara Reyes", "chat", "kiara"), ("Luca Rossi", "slack", "U12LUCA"),
]

_V = {
    "person": """Aaron Abigail Adrian Aisha Alan Alice Amara Amir Andre Angela Anika Arjun Ava Bianca Boris Camila
        Carlos Chloe Clara Daniel Daria David Diego Elena Eli Emma Erik Esther Fatima Felix Fiona Gabriel Grace
        Hassan Helen Hugo Ian Isaac Ivy Jack Jamal Jana Javier Jin Joel Julia Kai Karen Kenji Lars Laura Leo Lina
        Lucas Lucy Maya Mateo Mei Mia Miguel Mina Nadia Naomi Nikhil Nina Noah Olga Omar Oscar Paolo Petra Priya
        Quinn Rafael Rana Ravi Rosa Ruth Sami Sara Sean Sofia Sven Tara Theo Tomas Uma Valeria Victor Wen Yara
        Yusuf Zara Zoe""".split(),
    "relation": "sister|brother|mother|father|cousin|aunt|uncle|neighbour|grandmother|son|daughter|partner|"
                "flatmate|brother-in-law|godmother|nephew|niece|old school friend".split("|"),
    "city": """Berlin Lisbon Toronto Osaka Denver Austin Melbourne Dublin Nairobi Seattle Prague Boston Madrid
        Lagos Hamburg Kraków Porto Vancouver Montreal Edinburgh Glasgow Lyon Marseille Valencia Seville Bologna
        Turin Zagreb Ljubljana Tallinn Riga Vilnius Helsinki Bergen Gothenburg Aarhus Ghent Utrecht Rotterdam
        Antwerp Basel Geneva Graz Salzburg Brno Gdańsk Cluj Sofia Thessaloniki Izmir Tbilisi Yerevan Almaty Pune
        Chennai Kyoto Busan Taipei Hanoi Manila Auckland Wellington Perth Adelaide Halifax Calgary Portland
        Chicago Minneapolis Atlanta Savannah Tucson Oaxaca Medellín Quito Valparaíso Montevideo Recife""".split(),
    "company": """Acme Northwind Globex Initech Umbrella Hooli Vandelay Soylent Contoso Fabrikam Tyrell Cyberdyne
        Wonka Gringotts Oscorp Aperture Blackmesa Monarch Dunder Prestige Sterling Pied-Piper Massive-Dynamic
        Octan Virtucon Wernham Bluth Kramerica Genco Stark""".replace("-", " ").split(),
    "role": """nurse teacher designer engineer accountant chef photographer lawyer pharmacist architect developer
        librarian electrician dentist journalist translator physiotherapist carpenter geologist statistician
        midwife paramedic baker florist economist surveyor veterinarian sound-engineer data-analyst
        product-manager""".replace("-", " ").split(),
    "field": "chemistry|medieval history|civil engineering|linguistics|marine biology|economics|philosophy|"
             "computer science|architecture|nursing|graphic design|music theory|astrophysics|law|agronomy".split("|"),
    "language": "Spanish|Portuguese|Japanese|Korean|Arabic|Swahili|Polish|Dutch|Italian|Greek|Turkish|Hindi|"
                "Mandarin|Finnish|Czech|Romanian|Vietnamese|Tagalog".split("|"),
    "activity": "hiking|kayaking|pottery|trail running|bouldering|baking sourdough|cycling|open-water swimming|"
                "gardening|birdwatching|cross-country skiing|yoga|chess|salsa dancing|woodworking|knitting|"
                "sailing|archery|fencing|photography walks|surfing|rowing|tennis|badminton|table tennis|"
                "stand-up paddling|geocaching|calligraphy|watercolour painting|board gaming".split("|"),
    "place": "the old harbour|the botanical garden|the river path|the north beach|the pine forest|the city park|"
             "the lake shore|the canal|the hills behind town|the climbing gym|the community centre|"
             "the university campus|the market square|the ferry terminal|the old quarry".split("|"),
    "food": "peanuts|shellfish|gluten|strawberries|sesame|dairy|eggs|walnuts|kiwi|celery|mustard|soy|"
            "cashews|lupin|mango|tomatoes".split("|"),
    "dish": "mushroom risotto|pad thai|shakshuka|pho|jollof rice|pierogi|ramen|paella|moussaka|bibimbap|"
            "tacos al pastor|dal makhani|lasagne|ceviche|falafel wraps|goulash|katsu curry|borscht|arepas|"
            "laksa|feijoada|bobotie|khachapuri|poke bowls".split("|"),
    "band": "Radiohead|Fleetwood Mac|Khruangbin|Nina Simone|Daft Punk|Björk|Tinariwen|Portishead|ABBA|"
            "Miles Davis|Kraftwerk|Fela Kuti|Massive Attack|Joni Mitchell|Bon Iver|Buena Vista Social Club|"
            "The Cure|Ella Fitzgerald|Arctic Monkeys|Ryuichi Sakamoto".split("|"),
    "genre": "lo-fi beats|jazz|ambient|classical piano|Afrobeat|bossa nova|synthwave|folk|blues|"
             "baroque music|film scores|post-rock|reggae|flamenco".split("|"),
    "drink": "green tea|black coffee|oat milk lattes|rooibos|espresso|chai|matcha|hot chocolate|mint tea|"
             "cold brew".split("|"),
    "tool": "Vim|Emacs|VS Code|Excel|Figma|Notion|Jira|Trello|Postgres|SQLite|Kubernetes|Terraform|Ansible|"
            "Docker|Jenkins|GitLab|Tableau|Blender|Photoshop|Lightroom|LaTeX|Obsidian|Airtable|Grafana".split("|"),
    "task": "quick scripts|quarterly reports|design mockups|meeting notes|budget planning|photo editing|"
            "release checklists|grant applications|lesson plans|data cleaning".split("|"),
    "topic": "urban beekeeping|the history of maps|sleep science|Roman engineering|deep sea exploration|"
             "behavioural economics|Antarctic expeditions|typography|the spice trade|volcanoes|"
             "early computing|jazz history|forest ecology|medieval castles|quantum computing|soil health|"
             "climate adaptation|the silk road|coral reefs|space telescopes".split("|"),
    "pet": "dog|cat|rabbit|parrot|hamster|tortoise|ferret|guinea pig|gecko|budgie".split("|"),
    "petname": """Luna Oliver Milo Bella Max Coco Pepper Ziggy Nala Biscuit Mochi Tofu Waffles Pickles Bowie
        Juniper Clementine Nugget Pixel Sprocket Tango Olive Marble Pretzel""".split(),
    "instrument": "cello|trumpet|bass guitar|violin|drums|saxophone|piano|ukulele|clarinet|flute|banjo|"
                  "double bass|trombone|accordion".split("|"),
    "vehicle": "car|van|motorbike|camper van|cargo bike|scooter".split("|"),
    "color": "red|dark green|silver|pale blue|white|black|yellow|grey|orange|burgundy".split("|"),
    "brand": "Volvo|Fiat|Toyota|Skoda|Renault|Honda|Subaru|Mazda|Kia|Peugeot|Ford|Citroën".split("|"),
    "event": "a photography workshop|a jazz festival|a marathon|a book fair|a climbing competition|"
             "a design conference|a cooking class|a wedding|a hackathon|a chess tournament|a film festival|"
             "a trade fair|a family reunion|a music camp|a medical congress|a wine harvest".split("|"),
    "team": "finance|legal|platform|mobile|sales|support|research|design|marketing|operations|security|"
            "data|hardware|growth".split("|"),
    "cuisine": "Ethiopian|Georgian|Peruvian|Korean|Lebanese|Vietnamese|Sicilian|Mexican|Sri Lankan|Basque|"
               "Nepali|Turkish|Cantonese|Moroccan".split("|"),
    "weekday": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
    "month": "January February March April May June July August September October November December".split(),
    "medicine": "an EpiPen|antihistamines|a printed allergy card|an inhaler".split("|"),
    "room": "garage|attic|basement|hallway cupboard|spare room|garden shed|office drawer".split("|"),
    "thing": "tent|ladder|drill|sewing machine|projector|telescope|kayak paddles|camping stove|bike pump|"
             "tripod|snowboard|bread maker".split("|"),
    "adjective": """Amber Azure Bright Cobalt Copper Crimson Dusty Emerald Falcon Golden Granite Hidden Indigo
        Iron Jade Lunar Marble Misty Nimble Northern Onyx Polar Quiet Rapid Royal Ruby Scarlet Silent Silver
        Solar Swift Tidal Velvet Violet Wild Winter""".split(),
    "noun": """Anchor Arrow Badger Beacon Bridge Canyon Cedar Comet Compass Condor Delta Ember Falcon Fjord Forge
        Glacier Harbor Heron Horizon Island Kestrel Lantern Maple Meadow Meteor Orbit Otter Pioneer Prairie
        Quartz Raven Ridge River Sparrow Summit Thistle Tundra Voyager Willow""".split(),
}

# (memory type, first person as said in the message, third person as the memory states it,
#  key slots: per speaker and template, no two memories share the values of a key, so that
#  two memories do not differ only in a detail, which the worker would fold as near duplicates)
MEMORY_TEMPLATES = [
    ("identity", "I work as {a_role} at {company} in {city}.", "{S} works as {a_role} at {company} in {city}.",
     ["role", "company"]),
    ("identity", "I grew up in {city} and moved to {city2} in {year}.",
     "{S} grew up in {city} and moved to {city2} in {year}.", ["city", "city2"]),
    ("identity", "My {relation} {person} lives in {city} and works as {a_role}.",
     "{S}'s {relation} {person} lives in {city} and works as {a_role}.", ["person", "city"]),
    ("identity", "I speak {language} and I'm learning {language2} for a project at {company}.",
     "{S} speaks {language} and is learning {language2} for a project at {company}.", ["language+language2", "company"]),
    ("identity", "I studied {field} in {city} before joining {company}.",
     "{S} studied {field} in {city} before joining {company}.", ["city", "company"]),
    ("identity", "I've been {a_role} for {n} years and now lead the {team} team.",
     "{S} has been {a_role} for {n} years and now leads the {team} team.", ["role", "team"]),
    ("preference", "I love {activity} on {weekday} mornings, usually around {place}.",
     "{S} loves {activity} on {weekday} mornings, usually around {place}.", ["activity"]),
    ("preference", "I can't stand {dish}, but I'd eat {dish2} every single day.",
     "{S} dislikes {dish} but would eat {dish2} every day.", ["dish+dish2", "dish"]),
    ("preference", "My favourite artist is {band}, and I put on {genre} when I need to focus.",
     "{S}'s favourite artist is {band}; {S} listens to {genre} to focus.", ["band", "genre"]),
    ("preference", "I'd always pick {drink} over {drink2}, especially before {task}.",
     "{S} prefers {drink} over {drink2}, especially before {task}.", ["drink+drink2", "task"]),
    ("preference", "For {task} I'd rather use {tool} than {tool2}.", "{S} prefers {tool} over {tool2} for {task}.",
     ["tool+tool2", "task+tool"]),
    ("preference", "I've been reading everything about {topic} lately, and {topic2} is next on my list.",
     "{S} is reading about {topic} lately and wants to read about {topic2} next.", ["topic+topic2", "topic"]),
    ("preference", "Honestly {activity} bores me; give me {activity2} any day.",
     "{S} finds {activity} boring and prefers {activity2}.", ["activity+activity2", "activity"]),
    ("fact", "I'm allergic to {food}, so I always carry {medicine} when I eat out in {city}.",
     "{S} is allergic to {food} and carries {medicine} when eating out in {city}.", ["food", "city"]),
    ("fact", "I have a {pet} called {petname} who turned {n} this {month}.",
     "{S} has a {pet} called {petname}, who turned {n} in {month}.", ["petname", "pet+n"]),
    ("fact", "My {vehicle} is a {color} {brand} I bought in {year}.",
     "{S} drives a {color} {brand} {vehicle} bought in {year}.", ["brand+vehicle", "color+vehicle"]),
    ("fact", "I play the {instrument} in a {genre} group with {person} on {weekday} nights.",
     "{S} plays the {instrument} in a {genre} group with {person} on {weekday} nights.", ["instrument", "person"]),
    ("fact", "I'm moving the {team} team from {tool} to {tool2} at {company} this quarter.",
     "{S} is migrating the {team} team from {tool} to {tool2} at {company} this quarter.", ["team", "tool+tool2"]),
    ("fact", "I keep the {thing} in the {room} since {person} still has our {thing2}.",
     "{S} keeps the {thing} in the {room}; {person} still has {S}'s {thing2}.", ["thing", "person"]),
    ("fact", "My desk is on floor {n} of the {company} office near {place}.",
     "{S}'s desk is on floor {n} of the {company} office near {place}.", ["company", "place"]),
    ("episodic", "Last {weekday} I went {activity} with {person} near {place}.",
     "{S} went {activity} with {person} near {place} last {weekday}.", ["activity+weekday", "person"]),
    ("episodic", "In {month} I'm flying to {city} for {event}.", "{S} is flying to {city} in {month} for {event}.",
     ["city", "event+month"]),
    ("episodic", "Yesterday I sent {person} the report on {topic} for the {team} team.",
     "{S} sent {person} the report on {topic} for the {team} team.", ["topic+team", "person"]),
    ("episodic", "On {weekday} {person} and I present the {tool} rollout to {company}.",
     "{S} and {person} present the {tool} rollout to {company} on {weekday}.", ["tool+company", "person"]),
    ("episodic", "Two weeks ago my {relation} {person} came over from {city} for {event}.",
     "{S}'s {relation} {person} visited from {city} for {event} two weeks ago.", ["person", "city"]),
    ("episodic", "Last weekend {person} helped me repaint the {room} in {color}.",
     "{S} and {person} repainted {S}'s {room} in {color} last weekend.", ["person", "room"]),
    ("episodic", "We celebrated {person}'s birthday at a {cuisine} place in {city} in {month}.",
     "{S} celebrated {person}'s birthday at a {cuisine} restaurant in {city} in {month}.", ["person", "city"]),
]
ENTITY_TEMPLATE = "We kicked off Project {adjective} {noun} with {company} this week."
PROFILE_TEMPLATES = [  # (profile key, the slot that is its value, first person)
    ("home_city", "city", "I moved to {city} in {month} {year}."),
    ("employer", "company", "My new employer is {company}, starting {month}."),
    ("language", "language", "At home we mostly speak {language} now."),
]
OPENERS = ["", "", "", "Morning! ", "Quick update: ", "Hey, ", "So, ", "Fun fact: ", "Btw, ", "Catching up: "]
CLOSERS = ["", "", "", " Anyway, how are you?", " More soon.", " Talk later!", " What about you?", " :)"]


def _fill(template: str, rng: random.Random, speaker: str = "") -> tuple[str, dict]:
    values = {k: rng.choice(v) for k, v in _V.items()}
    for name in ("city", "dish", "drink", "tool", "topic", "activity", "language", "thing"):
        values[name], values[name + "2"] = rng.sample(_V[name], 2)
    values["a_role"] = ("an " if values["role"][0] in "aeiou" else "a ") + values["role"]
    values.update(S=speaker, n=rng.randint(2, 12), year=rng.randint(2004, 2024))
    return template.format(**values), values


class Statements:
    """Distinct statements: (kind, sentence as said, memory type, memory text / entity name /
    profile key and value)."""

    def __init__(self, rng: random.Random, seen: set[str]):
        self.rng = rng
        self.seen = seen
        self.template = -1

    def memory(self, speaker: str) -> tuple[str, str, str]:
        for _ in range(10000):
            index = self.rng.randrange(len(MEMORY_TEMPLATES))
            type_, said, stated, keys = MEMORY_TEMPLATES[index]
            sentence, values = _fill(said, self.rng, speaker)
            text = stated.format(**values)
            markers = [f"{speaker}|{index}|{key}|" + "|".join(sorted(str(values[k]) for k in key.split("+")))
                       for key in keys]
            if text not in self.seen and not any(m in self.seen for m in markers):
                self.seen.update([text, *markers])
                self.template = index
                return sentence, type_, text
        raise RuntimeError("ran out of distinct memory texts")

    def entity(self) -> tuple[str, str]:
        for _ in range(1000):
            sentence, v = _fill(ENTITY_TEMPLATE, self.rng)
            name = f"Project {v['adjective']} {v['noun']}"
            if name not in self.seen:
                self.seen.add(name)
                return sentence, name
        raise RuntimeError("ran out of distinct project names")

    def profile(self, speaker: str) -> tuple[str, str, str]:
        for _ in range(1000):
            key, slot, said = self.rng.choice(PROFILE_TEMPLATES)
            sentence, v = _fill(said, self.rng)
            marker = f"{speaker}|{key}|{v[slot]}"
            if marker not in self.seen:
                self.seen.add(marker)
                return sentence, key, v[slot]
        raise RuntimeError("ran out of distinct profile values")


# --- generation, inside Django (manage.py shell) ---------------------------------------------

def generate_in_django() -> None:
    """Run by `manage.py shell -c` against the launched instance's database; parameters in
    the environment variable MNEMO_BENCH_REVIEW (JSON). Prints progress lines and one final
    BENCH-RESULT line (JSON)."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from conversations.models import Interaction
    from conversations.services import InteractionItem, interactions_log
    from core.models import ApiKey, Role
    from core.services import membership_set
    from entities.models import Entity
    from entities.services import entity_propose, profile_candidate_add
    from memory.models import Memory
    from memory.services import Draft, Evidence, memory_store
    from review.models import ReviewItem, ReviewStatus

    p = json.loads(os.environ[PARAMS_ENV])
    workspace = ApiKey.objects.select_related("workspace").get(prefix=p["key_prefix"]).workspace
    out: dict = {"workspace_id": workspace.pk, "slug": workspace.slug}
    if p.get("username"):
        user = get_user_model().objects.create_user(username=p["username"], password=p["password"],
                                                    email=f"{p['username']}@example.org")
        membership_set(workspace=workspace, user=user, role=Role.REVIEWER)
    items_wanted = int(p["items"])
    if items_wanted <= 0:
        print(RESULT_PREFIX + json.dumps(out), flush=True)
        return
    rng = random.Random(p["seed"])
    seen = set(Memory.objects.filter(workspace=workspace).values_list("text", flat=True))
    seen |= set(Entity.objects.filter(workspace=workspace).values_list("name", flat=True))
    statements = Statements(rng, seen)
    pending_before = ReviewItem.objects.filter(workspace=workspace, status=ReviewStatus.PENDING).count()
    # the interactions, oldest first, ending an hour ago; 1-5 statements each (mean ~3.3)
    n_interactions = max(1, round(items_wanted / 3.3))
    span = timedelta(days=p.get("days", 14))
    end = datetime.now(timezone.utc) - timedelta(hours=1)
    step = span / n_interactions
    outcomes = {"memory created": 0, "memory reinforced": 0, "memory conflict": 0, "entity": 0, "entity existed": 0,
                "profile_value": 0, "profile skipped": 0}
    made, interactions, t0 = 0, 0, time.monotonic()
    batch_size = 100
    last_print = 0.0
    while made < items_wanted:
        batch = []  # (InteractionItem, [(kind, sentence, start, end, details...)])
        for _ in range(batch_size):
            if made + sum(len(s) for _, s in batch) >= items_wanted:
                break
            name, channel, channel_id = rng.choice(SPEAKERS)
            first = name.split()[0]
            k = min(rng.choices([1, 2, 3, 4, 5], weights=[1, 2, 3, 3, 2])[0],
                    items_wanted - made - sum(len(s) for _, s in batch))
            content = rng.choice(OPENERS)
            parts = []
            for _ in range(k):
                roll = rng.random()
                if roll < 0.03:
                    sentence, entity_name = statements.entity()
                    details = ("entity", entity_name)
                elif roll < 0.06:
                    sentence, key, value = statements.profile(name)
                    details = ("profile_value", key, value)
                else:
                    sentence, type_, text = statements.memory(first)
                    details = ("memory", type_, text)
                if content and not content.endswith(" "):
                    content += " "
                start = len(content)
                content += sentence
                parts.append((sentence, start, start + len(sentence), details))
            content += rng.choice(CLOSERS)
            at = end - span + step * (interactions + len(batch)) + timedelta(seconds=rng.uniform(0, 60))
            batch.append((InteractionItem(channel=channel, channel_id=channel_id, sender_name=name, content=content,
                                          occurred_at=min(at, end)), parts))
        with transaction.atomic():
            results = interactions_log(workspace=workspace, items=[item for item, _ in batch])
        entities = {e.pk: e for e in Entity.objects.filter(pk__in={r.entity_id for r in results if r.entity_id})}
        logged = {i.pk: i for i in Interaction.objects.filter(pk__in=[r.id for r in results if r.id])}
        with transaction.atomic():
            for result, (item, parts) in zip(results, batch):
                if result.status != "created":
                    raise SystemExit(f"interaction not created: {result}")
                interaction = logged[result.id]
                for sentence, start, stop, details in parts:
                    if interaction.content[start:stop] != sentence:
                        raise SystemExit(f"stored content differs from what was sent: {interaction.content!r}")
                    if details[0] == "memory":
                        stored = memory_store(workspace_id=workspace.pk, draft=Draft(
                            type=details[1], text=details[2], certainty="inferred",
                            confidence=round(rng.uniform(0.5, 0.85), 3), importance=round(rng.uniform(0.3, 0.8), 2),
                            subject_id=result.entity_id, source="model:synthetic-llm", model="synthetic-llm",
                            prompt_version="memories-v1", occurred_at=interaction.occurred_at,
                            conversation_id=interaction.conversation_id,
                            evidence=[Evidence(interaction.pk, sentence, start, stop)]))
                        outcomes[f"memory {stored.outcome}"] += 1
                    elif details[0] == "entity":
                        _, created = entity_propose(workspace_id=workspace.pk, kind="project", name=details[1],
                                                    evidence_ids=[interaction.pk], quote=sentence,
                                                    description=sentence, confidence=round(rng.uniform(0.5, 0.8), 3),
                                                    rule="model:synthetic-llm")
                        outcomes["entity" if created else "entity existed"] += 1
                    else:
                        row = profile_candidate_add(entity=entities[result.entity_id], key=details[1], value=details[2],
                                                    confidence=round(rng.uniform(0.5, 0.85), 3), evidence=interaction,
                                                    quote=sentence, source="model:synthetic-llm")
                        outcomes["profile_value" if row is not None else "profile skipped"] += 1
                    made += 1
        interactions += len(batch)
        elapsed = time.monotonic() - t0
        if elapsed - last_print >= 10 or made >= items_wanted:
            last_print = elapsed
            print(f"  generated {made:,}/{items_wanted:,} statements in {interactions:,} interactions "
                  f"({elapsed:.0f} s, {made / elapsed:.0f}/s)", flush=True)
    out.update(interactions=interactions, statements=made, outcomes=outcomes, seconds=round(time.monotonic() - t0, 1),
               pending_opened=ReviewItem.objects.filter(workspace=workspace, status=ReviewStatus.PENDING).count()
               - pending_before)
    print(RESULT_PREFIX + json.dumps(out), flush=True)


# --- the benchmark ----------------------------------------------------------------------------

def _manage_env(mnemo) -> dict[str, str]:
    # as bench.harness.workspace_key: the launched instance's var/ (database socket, broker)
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(MNEMO_VAR_DIR=str(mnemo.var_dir), LOG_LEVEL="WARNING")
    return env


def run_generation(mnemo, params: dict) -> dict:
    """generate_in_django() in `manage.py shell` against the launched instance; its progress
    lines are passed through."""
    env = _manage_env(mnemo)
    env[PARAMS_ENV] = json.dumps(params)
    proc = subprocess.Popen([sys.executable, "manage.py", "shell", "-c",
                             "from bench.review import generate_in_django; generate_in_django()"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    result, tail = None, []
    for line in proc.stdout:
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
        elif line.lstrip().startswith("generated"):
            print(line, end="", flush=True)
        else:
            tail = (tail + [line])[-40:]
    if proc.wait() != 0 or result is None:
        raise SystemExit("generation failed:\n" + "".join(tail))
    return result


def _get(client, path: str, **kwargs):
    """A GET outside the measurements; gunicorn drops a keep-alive connection idle for 2 s, so
    a request racing that close is sent once more on a new connection."""
    import httpx

    try:
        return client.get(path, **kwargs)
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError):
        return client.get(path, **kwargs)


def status(api) -> dict:
    return _get(api, "/api/v1/status").json()


def wait_idle(api, timeout: float, settle: float) -> tuple[float, dict]:
    """Until /api/v1/status reports nothing pending (background processing of the new
    interactions, memory embeddings, summaries, episode tails) and stays so for `settle`
    seconds: conversations count as waiting for their episode tail or summary only once the
    beat's sweep (every 60 s) has marked them idle, so a first idle answer can come early."""
    started = time.monotonic()
    last, idle_since = 0.0, None
    while True:
        s = status(api)
        now = time.monotonic()
        elapsed = now - started
        if s["idle"]:
            idle_since = idle_since or now
            if now - idle_since >= settle:
                print(f"  background processing idle after {idle_since - started:.0f} s "
                      f"(and still idle {settle:.0f} s later)", flush=True)
                return elapsed, s
        else:
            idle_since = None
        if elapsed > timeout:
            print(f"  WARNING: not idle after {timeout:.0f} s ({s['pending']}); measuring anyway", flush=True)
            return elapsed, s
        if elapsed - last >= 15 and not s["idle"]:
            last = elapsed
            busy = {k: v for k, v in s["pending"].items() if v}
            print(f"  waiting for the worker ({elapsed:.0f} s): {busy}", flush=True)
        time.sleep(1.5)


def pending_items(api) -> list[dict]:
    """Every pending item (GET /api/v1/candidates, pages of the allowed maximum 200), queue order."""
    rows, offset = [], 0
    while True:
        response = _get(api, "/api/v1/candidates", params={"limit": 200, "offset": offset})
        response.raise_for_status()
        page = response.json()
        rows += page["items"]
        offset += 200
        if offset >= page["count"] or not page["items"]:
            return rows


def pending_count(api) -> int:
    return _get(api, "/api/v1/candidates", params={"limit": 1}).json()["count"]


def login(url: str, username: str, password: str, landing: str):
    import httpx

    browser = httpx.Client(base_url=url, timeout=120)
    form = browser.get("/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    if form.status_code != 200 or token is None or "csrftoken" not in browser.cookies:
        raise SystemExit(f"/login/ answered {form.status_code} without a CSRF token")
    answer = browser.post("/login/", data={"username": username, "password": password,
                                           "csrfmiddlewaretoken": token.group(1), "next": landing},
                          headers={"Referer": f"{url}/login/"})
    if answer.status_code != 302 or "sessionid" not in browser.cookies:
        raise SystemExit(f"login failed: {answer.status_code} {answer.text[:300]}")
    return browser


def timed_get(client, path: str, headers: dict | None = None, post: dict | None = None,
              expect: int | tuple[int, ...] = 200) -> tuple[float, float, int]:
    """One request (a GET, or a POST of `post` as a form with the session's CSRF token), its
    server and client time and size; any status but `expect` stops the run."""
    headers = dict(headers or {})
    t0 = time.perf_counter()
    if post is None:
        response = client.get(path, headers=headers)
    else:
        headers.update({"X-CSRFToken": client.cookies.get("csrftoken", ""), "X-Requested-With": "fetch",
                        "Referer": str(client.base_url).rstrip("/") + path})
        response = client.post(path, data=post, headers=headers)
    client_ms = (time.perf_counter() - t0) * 1000
    if response.status_code not in (expect if isinstance(expect, tuple) else (expect,)):
        raise SystemExit(f"{'POST' if post else 'GET'} {path} answered {response.status_code}: {response.text[:300]}")
    m = _TIMING.search(response.headers.get("server-timing", ""))
    if not m:
        raise SystemExit(f"{path}: no Server-Timing header")
    return float(m.group(1)), client_ms, len(response.content)


def stats(values: list[float]) -> dict[str, float]:
    if len(values) >= 2:
        q = statistics.quantiles(sorted(values), n=100, method="inclusive")
        p = {"p50": q[49], "p95": q[94], "p99": q[98]}
    else:
        p = {"p50": values[0], "p95": values[0], "p99": values[0]}
    return {**{k: round(v, 1) for k, v in p.items()}, "mean": round(statistics.fmean(values), 1),
            "max": round(max(values), 1), "n": len(values)}


def measure(client, label: str, paths: list[str], warmup: list[str], headers: dict | None = None,
            post: dict | None = None, expect: int | tuple[int, ...] = 200) -> dict:
    import httpx

    for path in warmup or paths[:1]:  # at least one: the pooled connection may have gone stale
        try:
            timed_get(client, path, headers, post, expect)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError):
            timed_get(client, path, headers, post, expect)
    server, wall, size = [], [], []
    started = time.monotonic()
    for i, path in enumerate(paths, 1):
        s, c, n = timed_get(client, path, headers, post, expect)
        server.append(s)
        wall.append(c)
        size.append(n)
        if time.monotonic() - started > 20 and i % 25 == 0:
            print(f"    {label}: {i}/{len(paths)}, server p50 so far {statistics.median(server):.0f} ms", flush=True)
    row = {"path": paths[0] if len(set(paths)) == 1 else paths[0].split("/review/")[0] + "/review/<id>/similar/",
           "server_ms": stats(server), "client_ms": stats(wall), "kb": round(statistics.fmean(size) / 1024, 1)}
    print(f"  {label:26} server p50 {row['server_ms']['p50']:6.1f}  p95 {row['server_ms']['p95']:6.1f}  "
          f"p99 {row['server_ms']['p99']:6.1f} ms · client p50 {row['client_ms']['p50']:6.1f}  "
          f"p95 {row['client_ms']['p95']:6.1f} ms · {row['kb']} KB", flush=True)
    return row


def most_common(values) -> str:
    counts = _count(values)
    return max(sorted(counts), key=counts.get)


def measure_pages(args, browser, base: str, items: list[dict]) -> dict:
    """Every queue page variant the issue names (first page, a page further, a kind, a rule,
    a kind and a rule, words, oldest first, the htmx partial), the count behind "Select all N
    matching", and the similar-items fragment."""
    n, w = args.requests, args.warmup
    print(f"queue page, sequential, {w} warm-up + {n} requests each (ms):", flush=True)
    rule = most_common(i["rule"] for i in items)
    memory_rule = most_common(i["rule"] for i in items if i["kind"] == "memory")
    variants = {
        "first page": "",
        "page 2": "?page=2",
        "kind=memory": "?kind=memory",
        "rule": "?" + urlencode({"rule": rule}),
        "kind=memory + rule": "?" + urlencode({"kind": "memory", "rule": memory_rule}),
        # Issue 21 part 3: the queue searched (in item texts and their messages), read oldest first.
        "search (a speaker's name)": "?q=" + SPEAKERS[0][0].split()[0],
        "search (a rare word)": "?q=" + RARE_WORD,
        "search, nothing found": "?q=zzyzx",
        "oldest first": "?sort=oldest",
        "search + oldest first": "?sort=oldest&q=" + SPEAKERS[0][0].split()[0],
    }
    pages = {}
    for label, query in variants.items():
        pages[label] = measure(browser, label, [base + query] * n, [base + query] * w)
    pages["first page (htmx partial)"] = measure(browser, "first page, htmx partial", [base] * n, [base] * w,
                                                 headers={"HX-Request": "true"})
    # "Select all N matching" is decided by the server after it counts the match again: a
    # wrong expected count is refused (409) with nothing decided, so it measures that count;
    # above the bound (MNEMO_REVIEW_BULK_FILTER_MAX) the answer is 422 after counting bound + 1.
    for label, fields in (("select all matching: kind=entity", {"kind": "entity"}),
                          ("select all matching: everything", {}),
                          ("select all matching: search", {"q": SPEAKERS[0][0].split()[0]})):
        body = {**fields, "action": "approve", "expected": "999999999"}
        pages[label] = measure(browser, label, [base + "bulk/matching/"] * n, [base + "bulk/matching/"] * w,
                               post=body, expect=(409, 422))
    memories = [i["id"] for i in items if i["kind"] == "memory"]
    rng = random.Random(args.seed)
    picked = rng.sample(memories, min(len(memories), args.fragments + w))
    fragment_ids, fragment_warm = picked[w:] or picked, picked[:w]
    fragment_paths = [f"{base}{fragment_ids[i % len(fragment_ids)]}/similar/" for i in range(args.fragments)]
    pages["similar fragment"] = measure(browser, f"similar fragment ({len(set(fragment_ids))} items)", fragment_paths,
                                        [f"{base}{i}/similar/" for i in fragment_warm],
                                        headers={"HX-Request": "true"})
    return pages


def bulk_approve(api, batches: list[list[int]], kinds_of: dict[int, str]) -> list[dict]:
    import httpx

    out = []
    for number, ids in enumerate(batches, 1):
        # a new connection (the pooled one may have been closed by gunicorn's keep-alive timeout);
        # the wall time includes its set-up, well under a millisecond on loopback
        with httpx.Client(base_url=str(api.base_url), headers=dict(api.headers), timeout=600) as fresh:
            t0 = time.perf_counter()
            response = fresh.post("/api/v1/candidates/promote", json={"ids": ids, "note": "bench: bulk approve"})
            wall = time.perf_counter() - t0
        m = _TIMING.search(response.headers.get("server-timing", ""))
        row = {"batch": number, "ids": len(ids), "status": response.status_code, "wall_s": round(wall, 3),
               "server_s": round(float(m.group(1)) / 1000, 3) if m else None,
               "kinds": dict(sorted(_count(kinds_of[i] for i in ids).items()))}
        if response.status_code == 200:
            body = response.json()
            row.update(decided=len(body["decided"]), skipped=len(body["skipped"]),
                       skipped_examples=body["skipped"][:3])
            row["ok"] = row["decided"] == len(ids) and not body["skipped"]
        else:
            row.update(decided=0, skipped=None, ok=False, error=response.text[:500])
        out.append(row)
        verdict = "OK" if row["ok"] else "FAILED"
        print(f"  batch {number}: {len(ids)} ids {row['kinds']} → HTTP {row['status']}, decided {row['decided']}, "
              f"skipped {row['skipped']} [{verdict}] · wall {row['wall_s']:.2f} s, server {row['server_s']} s",
              flush=True)
        if not row["ok"]:
            print(f"  FAILURE: bulk approve did not decide every id: "
                  f"{row.get('skipped_examples') or row.get('error')}", flush=True)
    return out


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def run(args, mnemo, report: dict) -> None:
    import httpx

    api = httpx.Client(base_url=mnemo.url, timeout=300, headers={"Authorization": f"Bearer {mnemo.key}"})
    username, password = "bench-reviewer", f"pw-{random.Random().getrandbits(64):x}"
    report["login"] = {"username": username, "password": password}
    started = time.monotonic()
    rounds, pending, generated = [], 0, 0
    # The worker's own rule extraction over the new interactions adds items (memories,
    # relationships, entities, profile values, conflicts) and folds a few near duplicates:
    # round 1 generates part of --items, the pending items it led to per statement size the
    # next round.
    ratio = 1.0
    for round_ in range(1, args.max_rounds + 1):
        wanted = round(args.items * 0.6) if round_ == 1 else max(1, round((args.items - pending) / ratio))
        print(f"generation round {round_}: {wanted:,} statements (each one pending item) through the services …",
              flush=True)
        result = run_generation(mnemo, {"key_prefix": mnemo.key.split("_")[1], "items": wanted,
                                        "seed": args.seed + round_, "days": 14,
                                        "username": username if round_ == 1 else "", "password": password})
        generated += result["statements"]
        print(f"  {result['interactions']:,} interactions, {result['statements']:,} statements in "
              f"{result['seconds']:.0f} s: {result['outcomes']}; {result['pending_opened']:,} items opened "
              f"(net, while the worker runs)", flush=True)
        waited, _ = wait_idle(api, args.idle_timeout, args.settle)
        before, pending = pending, pending_count(api)
        ratio = max(0.5, (pending - before) / max(1, result["statements"]))
        result.update(wait_idle_seconds=round(waited, 1), pending_after=pending, pending_per_statement=round(ratio, 3))
        rounds.append(result)
        print(f"  pending review items now: {pending:,} ({ratio:.2f} per generated statement, the worker's "
              "extraction included)", flush=True)
        if pending >= args.items:
            break
    slug = rounds[0]["slug"]
    report["generation"] = {"rounds": rounds, "seconds": round(time.monotonic() - started, 1),
                            "statements": generated}
    s = _get(api, "/api/v1/candidates/stats").json()
    report["data"] = {"pending": pending, "pending_by_kind": s["by_kind"],
                      "interactions": sum(r["interactions"] for r in rounds)}
    print(f"measuring against {pending:,} pending items {s['by_kind']} (workspace {slug!r})", flush=True)

    items = pending_items(api)
    report["data"]["pending_listed"] = len(items)
    browser = login(mnemo.url, username, password, f"/w/{slug}/review/")
    report["status_before"] = status(api)
    report["pages"] = measure_pages(args, browser, f"/w/{slug}/review/", items)
    report["status_after_pages"] = status(api)

    # bulk: the oldest pending items (never on the queue's first page), distinct across batches
    oldest = items[::-1]
    need = args.bulk * args.batches
    if len(oldest) < need:
        print(f"WARNING: only {len(oldest)} pending items for {args.batches} × {args.bulk}", flush=True)
    batches = [[i["id"] for i in oldest[b * args.bulk:(b + 1) * args.bulk]] for b in range(args.batches)]
    batches = [b for b in batches if b]
    print(f"bulk approve, POST /api/v1/candidates/promote, {len(batches)} batches of {args.bulk} (s):", flush=True)
    report["bulk"] = bulk_approve(api, batches, {i["id"]: i["kind"] for i in items})
    after = pending_count(api)
    report["data"]["pending_after_bulk"] = after
    report["status_after"] = status(api)
    print(f"  pending after the bulk approvals: {after:,} (before {pending:,}, approved "
          f"{sum(r['decided'] for r in report['bulk']):,})", flush=True)


def print_report(report: dict) -> None:
    a = report["args"]
    print("\n" + "=" * 78)
    print(f"Mnemo review queue benchmark · {report['date']} · {report['machine']}")
    d, g = report["data"], report["generation"]
    print(f"data: {d['pending']:,} pending review items {d['pending_by_kind']} from {d['interactions']:,} "
          f"interactions (asked --items {a['items']:,}); generation + background processing {g['seconds']:.0f} s "
          f"in {len(g['rounds'])} round(s)")
    print(f"cold start to healthy {report['seconds_to_healthy']:.1f} s; status before measuring: "
          f"idle={report['status_before']['idle']}, after the pages: idle={report['status_after_pages']['idle']}")
    print(f"\nqueue page, ms ({a['requests']} sequential requests per row after {a['warmup']} warm-up; "
          f"server = Server-Timing app;dur, client = around the call)")
    print(f"  {'':28}{'server p50':>11}{'p95':>8}{'p99':>8}{'max':>8}   {'client p50':>11}{'p95':>8}{'p99':>8}"
          f"{'KB':>7}")
    for label, row in report["pages"].items():
        s, c = row["server_ms"], row["client_ms"]
        verdict = ("meets" if s["p95"] <= TARGET_PAGE_P95_MS else "MISSES") + f" p95 ≤ {TARGET_PAGE_P95_MS}" \
            if label != "similar fragment" else ""
        print(f"  {label:28}{s['p50']:>11}{s['p95']:>8}{s['p99']:>8}{s['max']:>8}   {c['p50']:>11}{c['p95']:>8}"
              f"{c['p99']:>8}{row['kb']:>7}   {verdict}")
    print(f"\nbulk approve, POST /api/v1/candidates/promote (target ≤ {TARGET_BULK_S:.0f} s)")
    for row in report["bulk"]:
        worst = max(row["wall_s"], row["server_s"] or 0)
        verdict = "meets" if worst <= TARGET_BULK_S and row["ok"] else "MISSES"
        print(f"  batch {row['batch']}: {row['ids']} ids  wall {row['wall_s']:.2f} s  server {row['server_s']} s  "
              f"decided {row['decided']}, skipped {row['skipped']}  {'ok' if row['ok'] else 'FAILED'}  {verdict}")
    print(f"pending after the bulk approvals: {d['pending_after_bulk']:,}")


def measure_again(args, report: dict) -> None:
    """--against: the page rows only, on the data an earlier --keep run left (after a code
    change the kept instance's gunicorn is reloaded with SIGHUP)."""
    import httpx

    api = httpx.Client(base_url=args.against, timeout=300, headers={"Authorization": f"Bearer {args.key}"})
    items = pending_items(api)
    report["data"] = {"pending": len(items), "pending_by_kind": _count(i["kind"] for i in items)}
    print(f"measuring against {len(items):,} pending items {report['data']['pending_by_kind']}", flush=True)
    username, password = args.login.split(":", 1)
    browser = login(args.against, username, password, f"/w/{args.slug}/review/")
    report["status_before"] = status(api)
    report["pages"] = measure_pages(args, browser, f"/w/{args.slug}/review/", items)
    report["status_after_pages"] = status(api)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000, help="pending review items to measure against")
    parser.add_argument("--bulk", type=int, default=500, help="ids per bulk approve (the API allows 1000)")
    parser.add_argument("--batches", type=int, default=3, help="bulk approve calls, each on distinct items")
    parser.add_argument("--requests", type=int, default=100, help="measured requests per queue page variant")
    parser.add_argument("--fragments", type=int, default=50, help="measured similar-fragment requests (distinct items)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up requests per row")
    parser.add_argument("--idle-timeout", type=float, default=1200, help="seconds to wait for the worker")
    parser.add_argument("--settle", type=float, default=75,
                        help="seconds /status must stay idle before measuring (the conversation sweep runs every 60 s)")
    parser.add_argument("--max-rounds", type=int, default=3, help="generation rounds to reach --items")
    parser.add_argument("--keep", action="store_true", help="keep the instance running at the end until Ctrl-C "
                        "(prints its URL, key, var dir and the reviewer's login) to look around")
    parser.add_argument("--start-timeout", type=float, default=300,
                        help="seconds the launched Mnemo may take to come up (a busy machine needs more)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--against", metavar="URL", help="measure the pages again on a Mnemo kept up by an earlier "
                        "--keep run (no generation, no bulk approval); needs --key and --login")
    parser.add_argument("--key", help="with --against: that run's API key")
    parser.add_argument("--login", metavar="USER:PASSWORD", help="with --against: the reviewer it printed")
    parser.add_argument("--slug", default="default", help="with --against: the workspace")
    args = parser.parse_args()
    if args.bulk > 1000:
        parser.error("--bulk: the API takes at most 1000 ids")
    if args.against and not (args.key and args.login and ":" in args.login):
        parser.error("--against needs --key and --login USER:PASSWORD")

    from bench.harness import launched, machine, write_report

    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
                    "args": {k: v for k, v in vars(args).items() if k not in ("key", "login")}}
    if args.against:
        measure_again(args, report)
        write_report(report, args.json)
        return
    started = time.monotonic()
    print(f"machine: {report['machine']}", flush=True)
    print("starting a throw-away Mnemo with the real launcher …", flush=True)
    with launched(timeout=args.start_timeout) as mnemo:
        report["seconds_to_healthy"] = round(mnemo.seconds_to_healthy, 1)
        try:
            run(args, mnemo, report)
        except BaseException:
            print("the launched Mnemo's last log lines:\n" + "".join(mnemo.log[-30:]), flush=True)
            raise
        if args.keep:
            print_report(report)
            print(f"\n--keep: Mnemo stays up at {mnemo.url} (API key {mnemo.key}, MNEMO_VAR_DIR={mnemo.var_dir}; "
                  f"log in as {report['login']['username']} / {report['login']['password']}); Ctrl-C or SIGTERM "
                  "stops it", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except (KeyboardInterrupt, SystemExit):
                pass
    report["total_seconds"] = round(time.monotonic() - started, 1)
    print_report(report)
    print(f"whole run {report['total_seconds']:.0f} s")
    report.pop("login", None)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
