"""The concepts layer's rows in a workspace archive (core.archive): the concept links.
Pack logs stay behind: what they served names the source's ids in JSON."""

from context.models import ConceptLink
from core.archive.tables import Table

TABLES = (Table("concept_links", ConceptLink),)
