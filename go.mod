module github.com/vetohq/veto

go 1.26.0

require github.com/rogpeppe/go-internal v1.16.0

require (
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/tools v0.38.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
