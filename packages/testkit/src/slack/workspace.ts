/** The stand-in's workspace: users, conversations and their messages, as the Web API reads them. */

export interface SlackFile {
  id: string;
  name: string;
  mimetype: string;
}

export interface SlackMessage {
  type: "message";
  ts: string;
  user?: string;
  bot_id?: string;
  text: string;
  thread_ts?: string;
  files?: SlackFile[];
  edited?: { user: string; ts: string };
}

export interface SlackUser {
  id: string;
  name: string;
  real_name: string;
  is_bot: boolean;
}

export interface SlackConversation {
  id: string;
  name: string | null;
  is_im: boolean;
  /** The other party of a DM. */
  user?: string;
  members: string[];
  messages: SlackMessage[];
  /** Shared with another organization (Slack Connect). */
  is_ext_shared?: boolean;
}

export class SlackWorkspace {
  readonly users = new Map<string, SlackUser>();
  readonly conversations = new Map<string, SlackConversation>();
  #clock = 1_700_000_000;
  #sub = 0;

  /** Slack timestamps: unique, increasing, `seconds.micros`. */
  nextTs(): string {
    this.#sub += 1;
    return `${this.#clock + Math.floor(this.#sub / 1000)}.${String(this.#sub % 1000).padStart(3, "0")}100`;
  }

  addUser(id: string, name: string, isBot = false): SlackUser {
    const user = { id, name, real_name: name, is_bot: isBot };
    this.users.set(id, user);
    return user;
  }

  addChannel(
    id: string,
    name: string,
    members: string[] = [],
    options: { extShared?: boolean } = {},
  ): SlackConversation {
    const channel: SlackConversation = {
      id,
      name,
      is_im: false,
      members: [...members],
      messages: [],
      ...(options.extShared ? { is_ext_shared: true } : {}),
    };
    this.conversations.set(id, channel);
    return channel;
  }

  /** The DM between the bot and a user (conversations.open creates it the same way). */
  dm(userId: string): SlackConversation {
    const id = `D${userId.slice(1)}`;
    let dm = this.conversations.get(id);
    if (!dm) {
      dm = { id, name: null, is_im: true, user: userId, members: [userId], messages: [] };
      this.conversations.set(id, dm);
    }
    return dm;
  }

  conversation(id: string): SlackConversation | undefined {
    return this.conversations.get(id);
  }

  add(channelId: string, message: Omit<SlackMessage, "type" | "ts"> & { ts?: string }): SlackMessage {
    const conversation = this.conversations.get(channelId);
    if (!conversation) throw new Error(`no conversation ${channelId}`);
    const stored: SlackMessage = { type: "message", ...message, ts: message.ts ?? this.nextTs() };
    conversation.messages.push(stored);
    // A root that gets a reply carries its own ts as thread_ts, as in Slack.
    const root = stored.thread_ts ? this.find(channelId, stored.thread_ts) : undefined;
    if (root && root.thread_ts === undefined) root.thread_ts = root.ts;
    return stored;
  }

  find(channelId: string, ts: string): SlackMessage | undefined {
    return this.conversations.get(channelId)?.messages.find((m) => m.ts === ts);
  }

  edit(channelId: string, ts: string, text: string, by = "editor"): SlackMessage {
    const message = this.find(channelId, ts);
    if (!message) throw new Error(`no message ${ts} in ${channelId}`);
    message.text = text;
    message.edited = { user: message.user ?? by, ts: this.nextTs() };
    return message;
  }

  delete(channelId: string, ts: string): void {
    const conversation = this.conversations.get(channelId);
    if (conversation) conversation.messages = conversation.messages.filter((m) => m.ts !== ts);
  }

  /** Top-level messages (and thread roots), newest first, as conversations.history lists them. */
  history(channelId: string): SlackMessage[] {
    const messages = this.conversations.get(channelId)?.messages ?? [];
    return messages.filter((m) => m.thread_ts === undefined || m.thread_ts === m.ts).reverse();
  }

  /** A thread: its root then its replies, oldest first, as conversations.replies lists them. */
  replies(channelId: string, rootTs: string): SlackMessage[] {
    const messages = this.conversations.get(channelId)?.messages ?? [];
    return messages.filter((m) => m.ts === rootTs || m.thread_ts === rootTs);
  }
}
