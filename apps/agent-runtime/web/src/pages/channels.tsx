import { ApiError } from "../../../client/api.ts";
import { api } from "../base.ts";
import { ErrorBox, Section, useLoad } from "../ui.tsx";

interface Channel {
  id: string;
  name?: string;
  main?: boolean;
}

/**
 * Linked team-chat channels. The team-chat adapter serves them; a runtime without it answers
 * 404 here, which is the "not configured" state, not an error.
 */
async function loadChannels(): Promise<Channel[] | null> {
  try {
    const body = await api.call<{ items: Channel[] }>("GET", "agents/channels");
    return body.items;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export function ChannelsPage() {
  const channels = useLoad(loadChannels);
  return (
    <Section title="Channels">
      <ErrorBox error={channels.error} />
      {channels.data === null && (
        <p className="empty">
          Team chat is not configured. Deliveries to <q>All channels</q> and <q>Team chat</q> go to the web chat.
        </p>
      )}
      {channels.data?.length === 0 && <p className="empty">No team-chat channel is linked yet.</p>}
      <ul>
        {channels.data?.map((c) => (
          <li key={c.id}>
            {c.name ?? c.id}
            {c.main ? " (main channel)" : ""}
          </li>
        ))}
      </ul>
    </Section>
  );
}
