import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { holdsSysAdmin } from "../src/driver/local/namespaces.ts";
import { spawnDirect } from "../src/driver/local/process.ts";
import { Spawner, type SpawnInput, type StdioSpec } from "../src/driver/local/spawner.ts";
import type { ExecProcess } from "../src/driver/types.ts";

const ENV = { PATH: "/usr/bin:/bin" };

type SpawnOptions = { stdio: StdioSpec; input: SpawnInput };

function collect(proc: ExecProcess): Promise<{ out: Buffer; err: string }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  proc.stdout.on("data", (c: Buffer) => out.push(c));
  proc.stderr.on("data", (c: Buffer) => err.push(c));
  const ended = (s: NodeJS.ReadableStream) => new Promise((r) => s.once("end", r));
  return Promise.all([ended(proc.stdout), ended(proc.stderr)]).then(() => ({
    out: Buffer.concat(out),
    err: Buffer.concat(err).toString(),
  }));
}

describe("spawner helper", () => {
  const spawner = new Spawner();
  afterAll(() => spawner.close());

  it("runs a child with stdin to EOF, stdout, stderr, cwd and its exit code", async () => {
    const proc = await spawner.spawn(["sh", "-c", 'cat; pwd; echo "$X" >&2; exit 3'], { ...ENV, X: "env-ok" }, "/tmp");
    if (!proc) throw new Error("the helper did not start");
    const output = collect(proc);
    proc.stdin.end("from stdin\n");
    expect(await proc.exited).toEqual({ exitCode: 3, descendantsLeft: false });
    expect(await output).toEqual({ out: Buffer.from("from stdin\n/tmp\n"), err: "env-ok\n" });
  });

  it("delivers large output intact and kills the whole process group", async () => {
    const big = await spawner.spawn(["head", "-c", "8388608", "/dev/zero"], ENV);
    if (!big) throw new Error("the helper did not start");
    big.stdin.end();
    const { out } = await collect(big);
    expect(out.length).toBe(8 * 1024 * 1024);

    const slow = await spawner.spawn(["sh", "-c", "sleep 30 & sleep 30"], ENV);
    if (!slow) throw new Error("the helper did not start");
    const started = Date.now();
    // The backgrounded sleep holds stdout too: only if it dies with the group does the stream end.
    const drained = collect(slow);
    slow.kill("SIGKILL");
    expect(await slow.exited).toMatchObject({ exitCode: 137 });
    await drained;
    expect(Date.now() - started).toBeLessThan(5000);

    // A child left running when the command exits is told: it may hold the output open.
    const leaving = await spawner.spawn(["sh", "-c", "sleep 30 & exit 0"], ENV);
    if (!leaving) throw new Error("the helper did not start");
    leaving.stdin.end();
    expect(await leaving.exited).toEqual({ exitCode: 0, descendantsLeft: true });
    leaving.kill("SIGKILL");
  });

  it("hands the child further fds as blocking sockets and /dev/null where told to ignore", async () => {
    const script = 'readlink /proc/self/fd/0 >&3; read -r x <&4; echo "got $x" >&3';
    const child = await spawner.spawnChild(["sh", "-c", script], ENV, {
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
    });
    if (!child) throw new Error("the helper did not start");
    expect(child.stdio[0]).toBeUndefined();
    const [, , , three, four] = child.stdio as NodeJS.ReadWriteStream[];
    const said: Buffer[] = [];
    const ended = new Promise((r) => three?.once("end", r));
    // Written once the child runs (it said something): the helper's copy would take earlier bytes.
    // And a while after: the child's read must wait for it, as a sandbox waits on fd 5 for its
    // egress relay (a non-blocking fd fails the read at once).
    three?.on("data", (c: Buffer) => {
      if (said.push(c) === 1) setTimeout(() => four?.end("hello\n"), 100);
    });
    expect(await child.exited).toEqual({ exitCode: 0, descendantsLeft: false });
    await ended;
    expect(Buffer.concat(said).toString()).toBe("/dev/null\ngot hello\n");
  });

  it("feeds a child its input on a further fd while this process is busy", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spawner-input-"));
    const file = join(dir, "read");
    const data = Buffer.from("--opt\0/a path/with spaces\0ü\0", "utf8");
    // The child copies fd 6 to a file and reports how many bytes it read; bwrap reads its options so.
    const script = 'cat <&6 > "$0"; wc -c < "$0" >&1';
    const spawners = [
      ["helper", (o: SpawnOptions) => spawner.spawnChild(["sh", "-c", script, file], ENV, o)],
      ["direct", async (o: SpawnOptions) => spawnDirect(["sh", "-c", script, file], ENV, o)],
    ] as const;
    try {
      for (const [how, spawn] of spawners) {
        rmSync(file, { force: true });
        const child = await spawn({ stdio: ["ignore", "pipe", "ignore"], input: { fd: 6, data } });
        if (!child) throw new Error("the helper did not start");
        expect(child.stdio[6], how).toBeUndefined();
        // This thread does nothing else meanwhile (as while it decides a sandbox's start): the
        // child must get all of its input all the same, without waiting for this process.
        const until = Date.now() + 5000;
        let read = Buffer.alloc(0);
        while (Date.now() < until && read.length < data.length) {
          read = existsSync(file) ? readFileSync(file) : read;
        }
        expect(read.equals(data), how).toBe(true);
        expect(await child.exited, how).toMatchObject({ exitCode: 0 });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives each of many children started at once its own sockets, beyond those kept ready", async () => {
    const procs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        spawner.spawn(["sh", "-c", `read -r x; echo "$x-${i}"; echo e${i} >&2`], ENV),
      ),
    );
    const outputs = procs.map((proc, i) => {
      if (!proc) throw new Error("the helper did not start");
      const output = collect(proc);
      proc.stdin.end(`in${i}\n`);
      return output;
    });
    expect(await Promise.all(outputs)).toEqual(
      Array.from({ length: 20 }, (_, i) => ({ out: Buffer.from(`in${i}-${i}\n`), err: `e${i}\n` })),
    );
  });

  it("reports a command that cannot start as exit 127", async () => {
    const proc = await spawner.spawn(["/nonexistent/binary"], ENV);
    expect(await proc?.exited).toMatchObject({ exitCode: 127 });
  });

  // bwrap is started so, without setpriv in between (namespaces.ts).
  it.skipIf(!holdsSysAdmin())("runs a child as another host user, with no supplementary groups", async () => {
    const child = await spawner.spawnChild(["sh", "-c", "id -u; id -g; grep ^Groups /proc/self/status"], ENV, {
      stdio: ["ignore", "pipe", "ignore"],
      user: { uid: 65533, gid: 65533 },
    });
    if (!child) throw new Error("the helper did not start");
    const out: Buffer[] = [];
    const stdout = child.stdio[1] as Duplex;
    stdout.on("data", (c: Buffer) => out.push(c));
    const ended = new Promise((r) => stdout.once("end", r));
    expect(await child.exited).toMatchObject({ exitCode: 0 });
    await ended;
    expect(
      Buffer.concat(out)
        .toString()
        .split("\n")
        .map((l) => l.trim()),
    ).toEqual(["65533", "65533", "Groups:", ""]);
  });
});
