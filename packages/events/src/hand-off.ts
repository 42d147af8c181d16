import type { Bus } from "./bus.ts";

/** An event as the outbox holds it. */
export interface HandOffEvent {
  id: string;
  topic: string;
  data: unknown;
  time: string;
}

/** A bus that hands events to consumers in this process and says when they are done with them. */
export type DeliveringBus = Bus & Required<Pick<Bus, "deliver">>;

export function canDeliver(bus: Bus): bus is DeliveringBus {
  return typeof bus.deliver === "function";
}

/**
 * Hands each event to the bus's consumer in this process and returns the ones no consumer had
 * handled after `timeoutMs`: none was subscribed, its handler failed, or it is still busy. The
 * caller writes those to its table, from which the relay delivers them again (a consumer still
 * busy with one when the time ran out may so get it twice, which at-least-once delivery allows).
 */
export async function handOff<E extends HandOffEvent>(
  bus: DeliveringBus,
  events: E[],
  timeoutMs: number,
): Promise<E[]> {
  const left = new Set(events);
  const all = Promise.all(
    events.map((e) =>
      bus.deliver(e.topic, e.data, { id: e.id, time: e.time }).then(
        () => void left.delete(e),
        () => {},
      ),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([all, late]);
  clearTimeout(timer);
  return left.size === 0 ? [] : events.filter((e) => left.has(e));
}
