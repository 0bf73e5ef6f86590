module github.com/workspacenet/facade/deploy

go 1.26.8

require (
	github.com/google/go-containerregistry v0.22.1 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	k8s.io/api v0.37.2 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
