// Package rules links every built-in rule family, each of which registers
// itself with package rule at init. A program that builds gates from
// policy imports it once; adding a family is one line here.
package rules

import (
	_ "github.com/vetohq/veto/rules/command"  // shell.*, exec.interpreter; the shell section
	_ "github.com/vetohq/veto/rules/control"  // veto.control; the control section
	_ "github.com/vetohq/veto/rules/files"    // file.*; the files section
	_ "github.com/vetohq/veto/rules/network"  // net.egress; the egress section
	_ "github.com/vetohq/veto/rules/sequence" // sequence.*; the sequence section
)
