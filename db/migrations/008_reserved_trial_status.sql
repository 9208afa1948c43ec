-- Schema version 8: reserved for the trial status `suspect` of issue 24's physics guard, which
-- lands on another branch. This placeholder changes nothing; when that branch's 008 is merged it
-- replaces this file (delete this one), so that migration 009 below keeps its number.
SELECT 1;
