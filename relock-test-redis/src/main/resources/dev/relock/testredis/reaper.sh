# Orphan reaper for dev.relock.testredis: cleans up after a JVM that died without running its shutdown hook.
#
# Run as:  sh -s JVM_PID BASE_DIR   with this text on standard input (so `ps` shows no script text).
#   JVM_PID   the JVM that started the servers; the reaper waits for it to be gone
#   BASE_DIR  that JVM's scratch directory; BASE_DIR/servers lists one server per line: "PID PORT DIRECTORY"
#             (appended on every start and restart; old lines may name dead or reused pids)
# Effect:  once JVM_PID is gone, SIGKILLs every listed pid that is still a redis-server on the listed port or
#          directory, removes BASE_DIR, and exits 0. Exits the same way after a normal JVM exit (the
#          shutdown hook has then already done the work, so nothing is left to kill).
# Linux only: liveness and identity come from /proc.

trap '' INT HUP   # a Ctrl-C aimed at the build must not take the reaper down before the servers

jvm=$1
base=$2
registry=$base/servers

# Prints field $2 (1-based, as in proc(5)) of /proc/$1/stat, or nothing if the process is gone.
# The command name (field 2) may contain spaces and parentheses, so fields are counted after the last ')'.
stat_field() {
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    rest=${stat##*) }
    # shellcheck disable=SC2086
    set -- $2 $rest
    shift $(( $1 - 2 ))
    echo "$1"
}

# Field 22 is the start time: together with the pid it names the JVM even if its pid is reused later.
jvm_start=$(stat_field "$jvm" 22)

jvm_alive() {
    [ -n "$jvm_start" ] || return 1
    [ "$(stat_field "$jvm" 22)" = "$jvm_start" ] || return 1
    [ "$(stat_field "$jvm" 3)" != Z ]
}

while jvm_alive; do
    sleep 1
done

if [ -f "$registry" ]; then
    while read -r pid port dir; do
        [ -n "$pid" ] || continue
        cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || continue
        cmdline="$cmdline "   # so that ":PORT " also matches a title that ends the command line
        case $cmdline in
            *redis-server*) ;;
            *) continue ;;
        esac
        # redis-server retitles itself "redis-server 127.0.0.1:PORT"; with titles off the config path shows.
        case $cmdline in
            *":$port "*|*"$dir"*) kill -9 "$pid" 2>/dev/null ;;
        esac
    done < "$registry"
fi

rm -rf "$base"
exit 0
