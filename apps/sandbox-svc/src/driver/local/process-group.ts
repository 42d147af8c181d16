// Asked of a command's process group once its leader has exited (spawner.ts, process.ts).

/**
 * Whether any process of the group led by `pid` is still there (a signal 0 reaches one, or one
 * exists that may not be signalled); the leader itself has exited and been reaped by then.
 */
export function groupLeft(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
