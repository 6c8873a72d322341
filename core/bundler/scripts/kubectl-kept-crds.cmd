kubectl get customresourcedefinitions -o go-template=@TEMPLATE@ | delete_documents
