// Package veto decides, immediately before an AI agent's tool call runs,
// whether that one call may run.
//
// The package holds the domain types (Call, Actor, Run, Target, Observation,
// History, Verdict, Event), the small interfaces the engine is built from
// (Rule, Resolver, Patcher, Offerability, Knowledge, Tally, Store) and the Gate: the one
// decision function every entry point goes through. A decision runs these
// stages in order, and the first denial ends it:
//
//	bounds → floor → offerability → target → rules → record → patch
//
// Packages below this one adapt it: rule (the registry of rules), eventlog
// (the stored form of events and the projection the stores share), memstore
// (the in-memory Store), cli (the veto command). None of them decides; they
// all call Gate.Decide or one of the resume paths, which call the same
// function. api/veto.txt lists the package's exported surface.
package veto
