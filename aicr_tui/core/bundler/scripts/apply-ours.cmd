apply_ours @FILE@ @OBJECTS@
