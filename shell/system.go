package shell

// The machine: disks destroyed (dd, mkfs, shred, …), modes and owners
// changed recursively, and persistence installed (crontab, systemctl,
// launchctl).

import (
	"path"
	"strings"
)

// blockDevice reports whether p names a disk.
func blockDevice(p string) bool {
	for _, prefix := range []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk", "/dev/mapper/", "/dev/md", "/dev/dm-", "/dev/loop", "/dev/rdisk"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

func runDd(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.unknown {
			continue
		}
		k, v, ok := strings.Cut(a.lit, "=")
		if !ok {
			continue
		}
		switch k {
		case "if":
			w.access(lit(v), false, false)
		case "of":
			if blockDevice(v) {
				w.finding(DiskDestroy, c.seg, "The command writes over a disk device.")
				continue
			}
			w.access(lit(v), true, false)
		}
	}
	return stage{}
}

func destroyDisk(w *walker, c *cmd) stage {
	w.finding(DiskDestroy, c.seg, "The command destroys data on a disk or a file beyond recovery.")
	return stage{}
}

func runChmod(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"reference": true, "from": true},
		flags: []string{"recursive", "changes", "silent", "quiet", "verbose", "dereference", "no-dereference", "preserve-root",
			"no-preserve-root", "help", "version"}}, false)
	ops := o.operands
	if !o.has("reference") && len(ops) > 0 {
		ops = ops[1:] // the mode or the owner
	}
	recursive := o.has("R", "recursive")
	home := w.env.Vars["HOME"]
	w.keepsContent = true
	defer func() { w.keepsContent = false }()
	for _, x := range ops {
		if recursive && !x.unknown {
			for _, v := range x.vals {
				if p := path.Clean(v); p == "/" || v == "~" || v == "~/" || (home != "" && p == path.Clean(home)) {
					w.finding(RecursiveRootChange, c.seg, "The command changes the mode or owner of everything below / or the home directory.")
				}
			}
		}
		w.access(x, true, false)
	}
	return stage{}
}

func runCrontab(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "u"}, false)
	if o.has("r") {
		w.finding(CrontabRemove, c.seg, "The command removes the user's crontab.")
		return stage{}
	}
	if o.has("l") {
		return stage{}
	}
	for _, f := range o.operands {
		w.access(f, false, false)
	}
	user := w.env.Vars["USER"]
	if u, ok := o.get("u"); ok {
		user = u
	}
	w.access(lit("/var/spool/cron/crontabs/"+orDefault(user, "user")), true, false)
	return stage{}
}

func runSystemctl(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "tpHMsn", long: map[string]bool{"type": true, "property": true, "host": true, "machine": true, "signal": true, "root": true}}, false)
	if len(o.operands) == 0 || o.operands[0].unknown {
		return stage{}
	}
	switch o.operands[0].lit {
	case "enable", "link", "edit", "preset", "add-wants", "add-requires", "set-property", "revert", "reenable":
	default:
		return stage{}
	}
	dir := "/etc/systemd/system/"
	if o.has("user", "global") {
		dir = "~/.config/systemd/user/"
	}
	for _, u := range o.operands[1:] {
		if u.unknown {
			w.access(u, true, false)
			continue
		}
		w.access(lit(dir+path.Base(u.lit)), true, false)
	}
	return stage{}
}

func runLaunchctl(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].unknown {
		return stage{}
	}
	switch c.args[0].lit {
	case "load", "bootstrap", "enable", "submit":
	default:
		return stage{}
	}
	for _, a := range c.args[1:] {
		if a.unknown {
			w.access(a, true, false)
			continue
		}
		if strings.HasPrefix(a.lit, "-") || !strings.Contains(a.lit, ".") {
			continue
		}
		w.access(lit("~/Library/LaunchAgents/"+path.Base(a.lit)), true, false)
	}
	return stage{}
}
