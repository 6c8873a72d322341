release_verify @NAMESPACE@ @RELEASE@ @NUMBER@
