/**
 * The relay's statements on one producer's outbox table. Fixed texts with a batch in one JSON
 * parameter: prepared once per connection whatever the batch size, and nothing to build per call.
 */
export interface OutboxStatements {
  /** $1 the rows as JSON, $2 the interval before the relay may claim them. */
  insert: string;
  /**
   * Claims up to a batch of available rows by moving `available_at` forward (a lease), which keeps
   * no transaction open while publishing, so a slow or unreachable bus never holds locks or blocks
   * the producer's writes. The same statement deletes the rows published since the last round
   * (they are leased, so no relay claims them meanwhile). $1 those ids as JSON, $2 the lease.
   */
  claim: string;
  /** $1 the ids of published rows as JSON. */
  delete: string;
  /** $1 ids as JSON, $2 the interval after which the relay may claim them again. */
  retryLater: string;
}

export function outboxStatements(table: string, batchSize: number): OutboxStatements {
  const ids = "select jsonb_array_elements_text(cast(cast($1 as text) as jsonb))";
  return {
    insert: `insert into ${table} (id, topic, data, time, available_at)
    select id, topic, data, time, now() + cast(cast($2 as text) as interval)
    from jsonb_to_recordset(cast(cast($1 as text) as jsonb)) as r(id text, topic text, data jsonb, time text)`,
    claim: `with published as (
      delete from ${table} where id in (${ids})
    )
    update ${table}
    set available_at = now() + cast(cast($2 as text) as interval), attempts = attempts + 1
    where id in (
      select id from ${table}
      where available_at <= now()
      order by created_at
      limit ${Number(batchSize)}
      for update skip locked
    )
    returning id, topic, data, time`,
    delete: `delete from ${table} where id in (${ids})`,
    retryLater: `update ${table} set available_at = now() + cast(cast($2 as text) as interval)
    where id in (${ids})`,
  };
}
