// Package supervise runs a command under a seccomp user-notification supervisor with a Landlock floor: each program
// the command's process tree executes, each file it opens, creates, renames or removes and each connection it makes
// is shown to a decider (Config.Decide) before the kernel carries it out, and refused with an error when the decider
// says so.
//
// (Being written: the design and its known limits follow in this comment.)
package supervise
