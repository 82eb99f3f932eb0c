// SELECTs on the hot read path (GET /v1/jobs/{id}), written with drizzle once per isolate and
// then run on D1 directly. Building a query with drizzle on every request was the largest
// share of an authenticated read's own CPU time (its entity checks and SQL assembly); the SQL
// text and the row decoding stay drizzle's, from the same schema, so the rows are the ones a
// drizzle select returns.
import { Column, fillPlaceholders, getTableColumns, type Query, type Table } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../context.ts";

/** D1's binding or one of its sessions: both prepare statements and run batches. */
export type D1Reader = Pick<D1Database, "prepare" | "batch">;

export interface PreparedStatement {
  /** The statement with its placeholders filled, for `.all()` or a D1 batch. */
  bind(d1: D1Reader, values: Record<string, unknown>): D1PreparedStatement;
  /** Its SQL and filled values, to embed in a larger statement. */
  query(values: Record<string, unknown>): Query;
}

export interface PreparedSelect<Row> extends PreparedStatement {
  /** The rows of the statement's result, decoded as drizzle decodes them. */
  rows(result: D1Result): Row[];
}

// Only builds SQL text: the client is never called.
const builder = drizzle({} as D1Database);

/** A statement written with drizzle, its values given as `sql.placeholder(name)`. */
export function preparedStatement(build: (db: Db) => { toSQL(): Query }): PreparedStatement {
  let built: Query | undefined;
  const query = (values: Record<string, unknown>) => {
    built ??= build(builder).toSQL();
    return { sql: built.sql, params: fillPlaceholders(built.params, values) };
  };
  return {
    bind(d1, values) {
      const { sql, params } = query(values);
      return d1.prepare(sql).bind(...params);
    },
    query,
  };
}

/**
 * A select of every column of `table` (as `db.select().from(table)…`), its values given as
 * `sql.placeholder(name)`.
 */
export function preparedSelect<T extends Table>(
  table: T,
  build: (db: Db) => { toSQL(): Query },
): PreparedSelect<T["$inferSelect"]> {
  const columns = Object.entries(getTableColumns(table)).map(([property, column]) => ({
    property,
    name: column.name,
    // Most columns store what they hold; only the others (JSON, booleans, dates) are decoded.
    decode:
      column.mapFromDriverValue === Column.prototype.mapFromDriverValue
        ? undefined
        : (value: unknown) => column.mapFromDriverValue(value),
  }));
  return {
    ...preparedStatement(build),
    rows(result) {
      return (result.results as Record<string, unknown>[]).map((raw) => {
        const row: Record<string, unknown> = {};
        for (const { property, name, decode } of columns) {
          const value = raw[name] ?? null;
          row[property] = value === null || !decode ? value : decode(value);
        }
        return row as T["$inferSelect"];
      });
    },
  };
}
