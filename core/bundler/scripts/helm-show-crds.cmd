helm show crds @OPTIONS@ -- @CHART@ | delete_documents
