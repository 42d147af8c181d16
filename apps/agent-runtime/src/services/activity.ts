/** How many runs of the agent (chat turns, webhook, heartbeat and scheduled runs) are executing now. */
export class AgentActivity {
  #running = 0;

  get busy(): boolean {
    return this.#running > 0;
  }

  get running(): number {
    return this.#running;
  }

  /** Counts a run until the returned function is called (once). */
  begin(): () => void {
    this.#running += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#running -= 1;
    };
  }

  async track<T>(run: () => Promise<T>): Promise<T> {
    const end = this.begin();
    try {
      return await run();
    } finally {
      end();
    }
  }
}
