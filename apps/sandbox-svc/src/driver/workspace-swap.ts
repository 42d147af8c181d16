/**
 * How a tar archive replaces a workspace's content (decision 0031), as shell run in the workspace:
 * unpacked whole beside it, then swapped in by renames, and what a swap interrupted by a kill left
 * put back at the next restore or start.
 *
 * A swap with id X uses two directories in the workspace: `.agentplane-restore-X` (the archive,
 * unpacked) and `.agentplane-previous-X` (the old content, moved aside). Once all of the old
 * content is aside, the file `.agentplane-previous-X/.agentplane-previous-X` says so (no entry of
 * the workspace can have that name: it would have kept the directory from being made). So:
 *  - only `restore-X`: the archive was being unpacked; the workspace is untouched. It goes.
 *  - both, without that file: the old content was being moved aside. It is moved back, `restore-X` goes.
 *  - both, with it: the archive's content was being moved up. What is up goes back into
 *    `restore-X`, the old content is moved back, `restore-X` goes.
 *  - only `previous-X`: the swap was complete, its old content was being removed. It goes.
 * An interrupted swap thus leaves the workspace as it was before the restore, or, once the swap
 * was done, as the restore made it; its content is never lost.
 */

/** The names of a swap's directories beside the workspace's content. */
export const RESTORE_PREFIX = ".agentplane-restore-";
export const PREVIOUS_PREFIX = ".agentplane-previous-";

/** Whether a name in the workspace is one a swap left. */
export function isSwapLeftover(name: string): boolean {
  return name.startsWith(RESTORE_PREFIX) || name.startsWith(PREVIOUS_PREFIX);
}

/**
 * Shell functions. `move_all DEST [SKIP1 SKIP2 [leftovers]]` moves every entry of the current
 * directory but the skipped ones (and, with a 4th argument, every swap directory) into DEST; a
 * directory without write permission is given it for its move (a directory moved elsewhere has
 * its `..` rewritten) and made read-only again. `settle NEW OLD` puts back what an interrupted
 * swap left (see above); `recover` settles every swap left in the workspace.
 */
const FUNCTIONS = `
move_all() {
  for e in * .[!.]* ..?*; do
    if [ ! -e "$e" ] && [ ! -L "$e" ]; then continue; fi
    if [ "$e" = "$2" ] || [ "$e" = "$3" ]; then continue; fi
    if [ -n "$4" ]; then
      case "$e" in ${RESTORE_PREFIX}*|${PREVIOUS_PREFIX}*) continue ;; esac
    fi
    if [ -d "$e" ] && [ ! -L "$e" ] && [ ! -w "$e" ]; then
      chmod u+w "$e" && mv -- "$e" "$1/" && chmod u-w "$1/$e" || return 1
    else
      mv -- "$e" "$1/" || return 1
    fi
  done
}
discard() { chmod -R u+w "$1" 2>/dev/null; rm -rf "$1"; }
settle() {
  if [ -d "$2" ] && [ ! -L "$2" ]; then
    if [ ! -d "$1" ] || [ -L "$1" ]; then discard "$2"; return; fi
    if [ -e "$2/$2" ]; then
      move_all "$1" "" "" leftovers || return 1
      rm -f "$2/$2" || return 1
    fi
    (cd "$2" && move_all .. "" "") && rmdir "$2" || return 1
  fi
  discard "$1"
}
recover() {
  for d in ${RESTORE_PREFIX}* ${PREVIOUS_PREFIX}*; do
    if [ ! -d "$d" ] || [ -L "$d" ]; then continue; fi
    id=\${d#${RESTORE_PREFIX}}; id=\${id#${PREVIOUS_PREFIX}}
    settle "${RESTORE_PREFIX}$id" "${PREVIOUS_PREFIX}$id" || return 1
  done
}
`;

/** Settles every interrupted swap in the workspace (the current directory); fails saying so. */
export const RECOVER_SCRIPT = `${FUNCTIONS}
recover || { echo "what an interrupted restore left in the workspace could not be put back" >&2; exit 1; }
`;

/**
 * Run in the workspace with the swap's two names as `$1` and `$2` (RESTORE_PREFIX and
 * PREVIOUS_PREFIX with one id) and the archive on stdin; `$3`, when given, names a file made once
 * the swap is done (what releases the Kubernetes restore step). First settles what an interrupted swap
 * left; then the archive is unpacked whole into `$1`, so one that does not unpack leaves the
 * workspace as it was; then the workspace's content is moved aside into `$2`, the archive's moved
 * up, and the old removed: renames in one filesystem. A step that fails puts the old content back.
 */
export const SWAP_SCRIPT = `${FUNCTIONS}
new=$1 old=$2
recover || { echo "what an interrupted restore left in the workspace could not be put back" >&2; exit 1; }
mkdir "$new" || exit 1
if ! tar -xzf - -C "$new"; then
  discard "$new"; echo "the archive did not unpack" >&2; exit 1
fi
mkdir "$old" || { discard "$new"; exit 1; }
if ! move_all "$old" "$new" "$old" || ! : > "$old/$old"; then
  settle "$new" "$old"; echo "the workspace's content could not be moved aside" >&2; exit 1
fi
if ! (cd "$new" && move_all .. "" ""); then
  settle "$new" "$old"; echo "the archive's content could not be moved into the workspace" >&2; exit 1
fi
rmdir "$new"; discard "$old"
if [ -n "$3" ]; then : > "$3" || exit 1; fi
exit 0
`;
