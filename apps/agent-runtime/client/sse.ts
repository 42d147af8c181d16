/** One Server-Sent Event as the runtime writes them (`id`, `event`, JSON `data`). */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads SSE frames from a fetch body as they arrive. fetch rather than EventSource: the caller
 * chooses `Last-Event-ID` when it resumes and may send headers (the gateway's credentials).
 */
export async function* readSseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = parseFrame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame) yield frame;
        end = buffer.indexOf("\n\n");
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function parseFrame(text: string): SseFrame | undefined {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0 && id === undefined) return undefined;
  return { ...(id !== undefined ? { id } : {}), event, data: data.join("\n") };
}
