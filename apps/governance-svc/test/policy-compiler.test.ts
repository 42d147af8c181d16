import { ProblemError } from "@agentplane/problem-details";
import { afterEach, describe, expect, it } from "vitest";
import { PolicyCompiler } from "../src/cedar/compiler.ts";

/** A body near the byte bound: 130 statements of ~120 operators each, about half a second of a core to compile. */
function heavyBody(count = 130): string {
  const statements: string[] = [];
  for (let s = 0; s < count; s++) {
    const tests = Array.from({ length: 60 }, (_, i) => `context.program == "p${s}.${i}"`);
    statements.push(
      `@id("rule-${s}")\npermit(principal, action == Action::"sandbox:exec", resource)\nwhen { ${tests.join(" || ")} };`,
    );
  }
  return statements.join("\n");
}

/** The longest the event loop went without running a 1 ms timer while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ stallMs: number; elapsedMs: number; result: T }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  try {
    const result = await work();
    const elapsedMs = performance.now() - start;
    // The timer's next turn, and the gap up to it (a synchronous compile leaves only this one).
    await new Promise((resolve) => setTimeout(resolve, 2));
    return { stallMs: Math.max(stallMs, performance.now() - last), elapsedMs, result };
  } finally {
    clearInterval(tick);
  }
}

describe("policy compiler thread", () => {
  let compiler: PolicyCompiler | undefined;
  afterEach(async () => {
    await compiler?.close();
    compiler = undefined;
  });

  it("compiles a heavy body without holding the event loop", async () => {
    const body = heavyBody();
    expect(body.length).toBeGreaterThan(200 * 1024);
    expect(body.length).toBeLessThanOrEqual(256 * 1024);
    compiler = new PolicyCompiler();
    // The thread and its Cedar module are started by a first, small compile.
    await compiler.compile(`permit(principal, action, resource);`);
    const { stallMs, elapsedMs, result } = await longestStall(() => compiler!.compile(body));
    expect(result).toHaveLength(130);
    expect(result[0]).toMatchObject({ id: "rule-0", effect: "permit", actions: ["sandbox:exec"] });
    // On the main thread the whole compile was one stall.
    expect(elapsedMs).toBeGreaterThan(100);
    expect(stallMs).toBeLessThan(Math.max(50, elapsedMs / 4));
  });

  it("answers a body's mistakes as the 400 problem, with line and column", async () => {
    compiler = new PolicyCompiler();
    const err = await compiler
      .compile(`permit(principal, action == Action::"sandbox:exec", resource)\nwhen { context.nope == 1 };`)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    const problem = (err as ProblemError).toBody();
    expect(problem.status).toBe(400);
    expect(problem.title).toBe("Validation Failed");
    expect((problem.errors as { pointer: string; message: string }[])[0]).toMatchObject({
      pointer: "/body/cedar",
      message: expect.stringMatching(/^line 2, column \d+: /),
    });
  });

  it("refuses compiles past the waiting bound with a 503 and Retry-After", async () => {
    compiler = new PolicyCompiler({ maxWaiting: 1 });
    const body = heavyBody(20);
    const first = compiler.compile(body);
    const second = compiler.compile(body);
    const third = await compiler.compile(body).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(ProblemError);
    expect((third as ProblemError).status).toBe(503);
    expect((third as ProblemError).headers["retry-after"]).toBe("2");
    expect(await first).toHaveLength(20);
    expect(await second).toHaveLength(20);
  });

  it("replaces a thread whose compile overran, and compiles again", async () => {
    compiler = new PolicyCompiler({ timeoutMs: 20 });
    const overran = await compiler.compile(heavyBody()).catch((e: unknown) => e);
    expect((overran as ProblemError).status).toBe(503);
    expect((overran as ProblemError).detail).toMatch(/took longer than 20 ms/);
    expect(compiler.running).toBe(false);
    const small = new PolicyCompiler();
    try {
      expect(await small.compile(`permit(principal, action, resource);`)).toHaveLength(1);
    } finally {
      await small.close();
    }
  });

  it("stops its thread when idle and starts it again on the next compile", async () => {
    compiler = new PolicyCompiler({ idleMs: 30 });
    await compiler.compile(`permit(principal, action, resource);`);
    expect(compiler.running).toBe(true);
    await expect.poll(() => compiler!.running, { timeout: 2000 }).toBe(false);
    expect(await compiler.compile(`forbid(principal, action, resource);`)).toHaveLength(1);
    expect(compiler.running).toBe(true);
  });

  it("refuses compiles once closed", async () => {
    compiler = new PolicyCompiler();
    await compiler.close();
    const err = await compiler.compile(`permit(principal, action, resource);`).catch((e: unknown) => e);
    expect((err as ProblemError).status).toBe(503);
  });
});
