delete_ours @OBJECTS@
