kubectl get customresourcedefinitions,namespaces -o go-template=@TEMPLATE@ | delete_documents
