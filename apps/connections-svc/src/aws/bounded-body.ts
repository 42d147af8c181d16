import type { Readable } from "node:stream";
import type { Logger } from "@agentplane/service-kit";

/** How long an AWS answer's body may take: between two chunks, and from its headers to its end. */
export interface BodyBounds {
  idleMs: number;
  totalMs: number;
}

/** Why a body was cut: no chunk within `idleMs`, or not over within `totalMs` of its headers. */
export class BodyTimeoutError extends Error {
  readonly reason: "idle" | "total";

  constructor(reason: "idle" | "total", bounds: BodyBounds) {
    super(
      reason === "idle"
        ? `the AWS endpoint sent no part of its answer's body for ${bounds.idleMs} ms`
        : `the AWS endpoint's answer body took longer than ${bounds.totalMs} ms`,
    );
    this.name = "BodyTimeoutError";
    this.reason = reason;
  }
}

/**
 * An AWS answer's body as a web stream, bounded in time: undici alone waits five minutes between
 * two chunks, so an endpoint that sent its headers and then dripped the body held the request (and
 * its socket) for as long as it liked. The idle time counts only while the reader waits for the
 * endpoint (a slow reader is not the endpoint's fault); the total runs from the headers. Past
 * either bound the upstream is destroyed, the stream errors (the caller sees the answer cut short)
 * and the cause is logged at warn.
 */
export function boundedBodyStream(
  readable: Readable,
  bounds: BodyBounds,
  log: { logger: Logger; host: string },
): ReadableStream<Uint8Array> {
  const chunks = readable[Symbol.asyncIterator]() as AsyncIterator<Uint8Array | string>;
  let failed: BodyTimeoutError | undefined;
  let waiting: ((error: BodyTimeoutError) => void) | undefined;
  let idle: NodeJS.Timeout | undefined;
  const fail = (cause: "idle" | "total") => {
    if (failed) return;
    failed = new BodyTimeoutError(cause, bounds);
    log.logger.warn({ host: log.host, cause, err: failed.message }, "AWS answer body cut short");
    readable.destroy(failed);
    waiting?.(failed);
  };
  const total = setTimeout(() => fail("total"), bounds.totalMs);
  total.unref();
  const stop = () => {
    clearTimeout(total);
    if (idle) clearTimeout(idle);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (failed) throw failed;
        idle = setTimeout(() => fail("idle"), bounds.idleMs);
        idle.unref();
        const next = await Promise.race([
          chunks.next(),
          new Promise<never>((_, reject) => {
            waiting = reject;
          }),
        ]);
        clearTimeout(idle);
        waiting = undefined;
        if (next.done) {
          stop();
          controller.close();
        } else controller.enqueue(typeof next.value === "string" ? Buffer.from(next.value) : next.value);
      } catch (error) {
        stop();
        controller.error(failed ?? error);
      }
    },
    cancel() {
      stop();
      readable.destroy();
    },
  });
}
