"""`errkb draft`: from a snippet that raises to a draft record and reproduction, with stubs for what only a person
can write (cause, fixes and their demonstrations, valid situations, other wordings)."""
