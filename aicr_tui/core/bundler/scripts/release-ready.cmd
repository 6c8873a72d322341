release_ready @NAMESPACE@ @RELEASE@ @NUMBER@
