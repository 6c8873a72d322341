uninstall_ours @NAMESPACE@ @RELEASE@
