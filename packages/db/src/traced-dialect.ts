// A span per database statement of a traced request: `SELECT projects`, with the operation and
// the table only. The statement's text and its parameters never go into a span (they carry ids,
// names and whatever a caller wrote). Outside a traced request a statement costs one lookup.
import { SpanKind, startChildSpan } from "@agentplane/telemetry";
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  OperationNode,
  QueryResult,
  TransactionSettings,
} from "kysely";

const OPERATIONS: Record<string, string> = {
  SelectQueryNode: "SELECT",
  InsertQueryNode: "INSERT",
  UpdateQueryNode: "UPDATE",
  DeleteQueryNode: "DELETE",
  MergeQueryNode: "MERGE",
};
const RAW_OPERATIONS = new Set([
  "SELECT",
  "INSERT",
  "UPDATE",
  "DELETE",
  "WITH",
  "BEGIN",
  "COMMIT",
  "ROLLBACK",
  "SAVEPOINT",
  "RELEASE",
  "LOCK",
  "SET",
]);

interface TableLike {
  table?: { identifier?: { name?: unknown } };
}

/** The first table a statement names, when its node says so plainly. */
function tableOf(node: OperationNode): string | undefined {
  const n = node as unknown as {
    into?: TableLike;
    from?: { froms?: TableLike[] };
    table?: TableLike;
  };
  const name = (n.into ?? n.from?.froms?.[0] ?? n.table)?.table?.identifier?.name;
  return typeof name === "string" && /^[a-z_][a-z0-9_]{0,62}$/i.test(name) ? name : undefined;
}

/** The statement's operation and table: from Kysely's node, or a raw statement's first keyword. */
export function describeStatement(query: CompiledQuery): { operation: string; table?: string } {
  const kind = query.query.kind;
  const operation = OPERATIONS[kind];
  if (operation) {
    const table = tableOf(query.query);
    return table ? { operation, table } : { operation };
  }
  const word = /^\s*([a-z]+)/i.exec(query.sql)?.[1]?.toUpperCase();
  return { operation: word && RAW_OPERATIONS.has(word) ? word : "SQL" };
}

function traced(connection: DatabaseConnection, inner: WeakMap<object, DatabaseConnection>): DatabaseConnection {
  const wrapper = new Proxy(connection, {
    get(target, prop, receiver) {
      if (prop === "executeQuery") {
        return async <R>(query: CompiledQuery, ...rest: unknown[]): Promise<QueryResult<R>> => {
          const { operation, table } = describeStatement(query);
          const span = startChildSpan(
            table ? `${operation} ${table}` : operation,
            {
              "db.system.name": "postgresql",
              "db.operation.name": operation,
              ...(table ? { "db.collection.name": table } : {}),
            },
            SpanKind.CLIENT,
          );
          if (!span) return (target.executeQuery as (...a: unknown[]) => Promise<QueryResult<R>>)(query, ...rest);
          try {
            const result = await (target.executeQuery as (...a: unknown[]) => Promise<QueryResult<R>>)(query, ...rest);
            span.setAttribute("db.response.returned_rows", result.rows.length);
            return result;
          } catch (err) {
            span.setStatus({ code: 2 });
            const code = (err as { code?: unknown }).code;
            if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code))
              span.setAttribute("db.response.status_code", code);
            throw err;
          } finally {
            span.end();
          }
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  inner.set(wrapper, connection);
  return wrapper;
}

/** `dialect` with a span per statement run inside a traced request. */
export function tracedDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver(): Driver {
      const driver = dialect.createDriver();
      const inner = new WeakMap<object, DatabaseConnection>();
      const unwrap = (c: DatabaseConnection) => inner.get(c) ?? c;
      const wrapped: Driver = {
        init: (...a) => driver.init(...a),
        acquireConnection: async (...a) => traced(await driver.acquireConnection(...a), inner),
        beginTransaction: (c, settings: TransactionSettings) => driver.beginTransaction(unwrap(c), settings),
        commitTransaction: (c) => driver.commitTransaction(unwrap(c)),
        rollbackTransaction: (c) => driver.rollbackTransaction(unwrap(c)),
        releaseConnection: (c, ...a) => driver.releaseConnection(unwrap(c), ...a),
        destroy: (...a) => driver.destroy(...a),
      };
      if (driver.savepoint) wrapped.savepoint = (c, name, compile) => driver.savepoint!(unwrap(c), name, compile);
      if (driver.rollbackToSavepoint)
        wrapped.rollbackToSavepoint = (c, name, compile) => driver.rollbackToSavepoint!(unwrap(c), name, compile);
      if (driver.releaseSavepoint)
        wrapped.releaseSavepoint = (c, name, compile) => driver.releaseSavepoint!(unwrap(c), name, compile);
      return wrapped;
    },
  };
}
