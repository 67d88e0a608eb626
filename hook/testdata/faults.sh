#!/bin/bash
# The fault table of docs/state.md: real veto and veto-hook processes, real
# files. Run by hand (it needs python3 with sqlite3): build veto and veto-hook
# into a directory, and run B=DIR bash hook/testdata/faults.sh.
B=${B:?build veto and veto-hook into a directory and set B to it}
W=$(mktemp -d /tmp/veto-faults.XXXX)
mkdir -p $W/ws/.git $W/run; chmod 700 $W/run
echo 'package main' > $W/ws/main.go
head -c 65536 $B/veto > $W/veto-unrunnable; chmod 644 $W/veto-unrunnable
export XDG_CONFIG_HOME=$W/config VETO_MANAGED_POLICY=$W/none.yaml VETO_NO_SERVER=
ev() { echo "{\"session_id\":\"s\",\"cwd\":\"$W/ws\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"$W/ws/main.go\"},\"tool_use_id\":\"$1\"}"; }
call() {
  local mode=$1 id=$2
  if [ $mode = hook ]; then ev $id | VETO_NO_SERVER=1 $B/veto-hook claude-code 2>$W/err; else ev $id | $B/veto-hook claude-code 2>$W/err; fi
  echo $?
}
decided() { python3 - "$1" "$2" <<'PY'
import sqlite3,sys
c=sqlite3.connect(sys.argv[1]); print(c.execute("select count(*) from veto_events where kind in ('invocation_allowed','invocation_denied') and cast(body as text) like ?",('%"call_id":"'+sys.argv[2]+'"%',)).fetchone()[0])
PY
}
cause() { grep -o "is damaged[^,]*\|was written by a newer veto\|is locked[^,]*\|cannot be reached[^,]*\|is not a usable path[^,]*\|cannot be written[^,]*\|did not decide within [0-9.a-z]*" $W/err | head -1 | cut -c1-70; }
damage() {
  local p=$1
  case $2 in
  "truncated to 0") truncate -s 0 $p;;
  "truncated to 100 bytes") truncate -s 100 $p;;
  "B-tree page headers flipped") sz=$(stat -c %s $p); for ((o=4096;o<sz;o+=4096)); do printf '\x37\xff\xff\xff\xff' | dd of=$p bs=1 seek=$o conv=notrunc status=none; done;;
  "overwritten with garbage") sz=$(stat -c %s $p); head -c $sz /dev/urandom > $p.g; cat $p.g > $p; rm $p.g;;
  "replaced by a newer schema") cp $p $p.n; python3 -c "import sqlite3; c=sqlite3.connect('$p.n'); c.execute(\"update veto_meta set value='99' where key='migrations'\"); c.commit()"; mv $p.n $p;;
  "migrated in place by a newer veto") python3 -c "import sqlite3; c=sqlite3.connect('$p'); c.execute(\"update veto_meta set value='99' where key='migrations'\"); c.commit()";;
  esac
}
start() { # MODE DIR: a seeded state; for served, a server that alone can answer
  export VETO_STATE=$W/$2/veto.db VETO_SOCKET=$W/run/$2.sock VETO_FULL=$B/veto
  for i in $(seq 1 60); do call $1 seed$i >/dev/null; done
  $B/veto log --state $VETO_STATE >/dev/null  # checkpoints: the file has pages of its own
  if [ $1 = served ]; then
    for i in $(seq 1 50); do [ -S $VETO_SOCKET ] && break; sleep 0.1; done
    export VETO_FULL=$W/veto-unrunnable   # the same build, cannot run: only the server answers
  fi
}
stop() { VETO_FULL=$B/veto $B/veto serve-hooks --stop --socket $VETO_SOCKET >/dev/null 2>&1; }
printf "| fault | path | verdict | cause named | allowed after the fault |\n|---|---|---|---|---|\n"
k=0
for fault in "truncated to 0" "truncated to 100 bytes" "B-tree page headers flipped" "overwritten with garbage" "replaced by a newer schema" "migrated in place by a newer veto"; do
  for mode in hook served; do
    k=$((k+1)); start $mode f$k
    before=$(call $mode before)
    damage $VETO_STATE "$fault"
    ok=0; code=
    for i in 1 2 3; do code=$(call $mode after$i); [ "$code" = 0 ] && ok=$((ok+1)); done
    printf "| %s | %s | exit %s | %s | %d of 3 |\n" "$fault" "$mode" "$code" "$(cause)" $ok
    stop
  done
done
# A lock held past the busy timeout.
for mode in hook served; do
  k=$((k+1)); start $mode f$k
  python3 -c "
import sqlite3,time,sys
c=sqlite3.connect('$VETO_STATE',isolation_level=None); c.execute('begin immediate'); c.execute(\"insert into veto_meta values ('held','1')\"); open('$W/held','w').close(); time.sleep(6)" & py=$!
  while [ ! -e $W/held ]; do sleep 0.05; done
  code=$(call $mode locked1)
  printf "| %s | %s | exit %s | %s | %d of 1 |\n" "a lock held past the busy timeout" "$mode" "$code" "$(cause)" $([ "$code" = 0 ] && echo 1 || echo 0)
  kill $py; wait $py 2>/dev/null; rm -f $W/held; stop
done
# A '?' and '#' in XDG_STATE_HOME: exactly that file, 0600.
for mode in hook served; do
  k=$((k+1)); export VETO_STATE= XDG_STATE_HOME="$W/st?x=1#y%20z" VETO_SOCKET=$W/run/q$k.sock VETO_FULL=$B/veto
  code=$(call $mode q$k-1); code=$(call $mode q$k-2)
  f="$XDG_STATE_HOME/veto/veto.db"
  printf "| %s | %s | exit %s | %s | %s |\n" "XDG_STATE_HOME with ? # %20" "$mode" "$code" "mode $(stat -c %a "$f" 2>&1) at exactly that path; stray files: $(ls $W | grep -c '^st$')" "acknowledged 2, recorded there $(( $(decided "$f" q$k-1) + $(decided "$f" q$k-2) ))"
  unset XDG_STATE_HOME; stop
done
# The server stopped (SIGSTOP) past veto-hook's deadline while deciding, then continued.
k=$((k+1)); start served f$k; export VETO_FULL=$B/veto
pid=$(pgrep -f "serve-hooks --socket $VETO_SOCKET")
kill -STOP $pid
code=$(call served stopped1)
kill -CONT $pid; sleep 2.5
printf "| %s | %s | exit %s | %s | decisions for the call: %s |\n" "server SIGSTOPped mid-call, then SIGCONT" "served→veto hook" "$code" "-" "$(decided $VETO_STATE stopped1)"
stop
# The server SIGKILLed at a random point under load: every acknowledged decision is recorded.
k=$((k+1)); start served f$k; export VETO_FULL=$B/veto
pid=$(pgrep -f "serve-hooks --socket $VETO_SOCKET")
( sleep 0.$((RANDOM%9+1)); kill -9 $pid ) &
ack=0; lost=0
for i in $(seq 1 80); do code=$(call served kill$i); if [ "$code" = 0 ]; then ack=$((ack+1)); [ "$(decided $VETO_STATE kill$i)" = 1 ] || lost=$((lost+1)); fi; done
wait
printf "| %s | %s | %s | %s | acknowledged %d, lost %d |\n" "server SIGKILLed under load (80 calls)" "served→veto hook" "all exit 0" "-" $ack $lost
stop
rm -rf $W
