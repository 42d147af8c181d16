import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import type { ExecProcess } from "../src/driver/types.ts";
import { newDriver, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();

/** Collects a TTY exec's output until it exits. */
async function collect(proc: ExecProcess): Promise<{ out: string; exitCode: number }> {
  const chunks: Buffer[] = [];
  proc.stdout.on("data", (c: Buffer | string) => chunks.push(Buffer.from(c)));
  const { exitCode } = await proc.exited;
  return { out: Buffer.concat(chunks).toString(), exitCode };
}

describe.skipIf(!bwrap.available)(`TTY exec in an isolated sandbox${bwrap.reason}`, () => {
  let driver: LocalDriver;
  beforeAll(async () => {
    driver = newDriver();
    await driver.start({ id: "sbx_tty", slug: "sbx-tty", image: "default", env: {}, resources: {} });
  });
  afterAll(() => driver.close());

  it("gives the command a terminal of the sandbox as its controlling terminal", async () => {
    const proc = await driver.exec("sbx_tty", { argv: ["sh", "-c", "tty; stty size"], tty: true, cols: 90, rows: 20 });
    const { out, exitCode } = await collect(proc);
    expect(exitCode).toBe(0);
    expect(out).toMatch(/^\/dev\/pts\/\d+\r?$/m);
    expect(out).toContain("20 90");
  });

  it("passes the exit code and window-size changes through", async () => {
    const proc = await driver.exec("sbx_tty", {
      // `stty size` runs once the resize is seen (or after 5 s, and then the size check fails).
      argv: [
        "sh",
        "-c",
        `i=0; while [ $i -lt 100 ] && [ "$(stty size)" != "43 132" ]; do sleep 0.05; i=$((i+1)); done; stty size; exit 5`,
      ],
      tty: true,
      cols: 80,
      rows: 24,
    });
    const done = collect(proc);
    proc.resize?.(132, 43);
    const { out, exitCode } = await done;
    expect(exitCode).toBe(5);
    expect(out).toContain("43 132");
  });

  it("runs an interactive shell with job control, echoing input once", async () => {
    const proc = await driver.exec("sbx_tty", { argv: ["sh", "-i"], tty: true });
    let seen = "";
    proc.stdout.on("data", (c: Buffer | string) => {
      seen += c.toString();
    });
    const done = collect(proc);
    // Typed at the prompt, as a person would: input sent before the terminal is set up is
    // type-ahead that the outer terminal echoes too.
    await expect.poll(() => seen, { timeout: 5000 }).toMatch(/\$ $/);
    proc.stdin.write("sleep 30 & jobs; kill %1; echo marker-$((40+2)); exit 7\n");
    const { out, exitCode } = await done;
    expect(exitCode).toBe(7);
    expect(out).toMatch(/\[1\]\s*\+?\s*Running\s+sleep 30/);
    expect(out).not.toMatch(/can't access tty|no job control/);
    expect(out.match(/echo marker-\$\(\(40\+2\)\)/g)).toHaveLength(1);
    expect(out).toContain("marker-42");
  });
});
