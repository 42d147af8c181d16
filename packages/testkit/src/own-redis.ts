import { type ChildProcess, spawn } from "node:child_process";
import { freePort } from "./http.ts";

/**
 * A redis-server of one suite's own, so a test can stop and start it without touching anyone
 * else's. With `dir` it persists (append-only, fsync always), as production Redis should.
 */
export class OwnRedis {
  port = 0;
  private child: ChildProcess | undefined;
  private readonly dir: string | undefined;

  constructor(options: { dir?: string } = {}) {
    this.dir = options.dir;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // The same port on restart, so clients reconnect to it.
    if (!this.port) this.port = await freePort();
    const persistence = this.dir
      ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", this.dir]
      : ["--appendonly", "no"];
    const child = spawn("redis-server", ["--port", String(this.port), "--save", "", ...persistence], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("Ready to accept connections")) resolve();
      });
      child.once("exit", () => reject(new Error("redis-server exited")));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill("SIGKILL");
    });
  }
}
