import { api } from "../base.ts";
import { ConfirmDelete, ErrorBox, Section, Switch, useAction, useLoad } from "../ui.tsx";

/** Linked team-chat channels and the main one (spec: the channel flagged on the channels view). */
export function ChannelsPage() {
  const state = useLoad(api.teamChat);
  const channels = useLoad(api.channels);
  const { act, error } = useAction(channels.reload);
  const chat = state.data;
  if (chat?.state === "off") {
    return (
      <Section title="Channels">
        <p className="empty">
          Team chat is not configured (no <code>CHAT_BOT_TOKEN</code>). Deliveries to <q>All channels</q> and{" "}
          <q>Team chat</q> go to the web chat.
        </p>
      </Section>
    );
  }
  return (
    <div className="stack">
      <Section title="Team chat">
        <ErrorBox error={state.error} />
        {chat && (
          <dl className="facts">
            <dt>State</dt>
            <dd>
              {chat.state}
              {chat.detail ? `: ${chat.detail}` : ""}
            </dd>
            <dt>Mode</dt>
            <dd>
              {chat.mode === "team"
                ? "Team: deliveries go to the main channel (else the oldest linked one)"
                : "Personal: deliveries go to the owner's direct messages"}
            </dd>
            <dt>Owner</dt>
            <dd>
              {chat.owner.id ?? (chat.owner.pairingPending ? "waiting for the pairing code" : "not paired")}
              {chat.owner.source ? ` (${chat.owner.source})` : ""}
            </dd>
          </dl>
        )}
      </Section>
      <Section title="Channels">
        <ErrorBox error={error ?? channels.error} />
        {channels.data?.length === 0 && <p className="empty">No channel is linked yet: invite the bot to one.</p>}
        <ul className="notes">
          {channels.data?.map((c) => (
            <li key={c.id} className="row">
              <span>
                #{c.name ?? c.id} <span className="muted">linked {new Date(c.linkedAt).toLocaleString()}</span>
              </span>
              <span className="row">
                Main{" "}
                <Switch
                  label={`Main channel ${c.name ?? c.id}`}
                  checked={c.main}
                  onChange={(main) => act(() => api.updateChannel(c.id, { main }))}
                />
              </span>
              <ConfirmDelete
                what={`link to #${c.name ?? c.id}`}
                onConfirm={() => act(() => api.updateChannel(c.id, { linked: false }))}
              />
            </li>
          ))}
        </ul>
      </Section>
    </div>
  );
}
