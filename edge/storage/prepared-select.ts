// SELECTs on the hot read path (GET /v1/jobs/{id}), written with drizzle once per isolate and
// then run on D1 directly. Building a query with drizzle on every request was the largest
// share of an authenticated read's own CPU time (its entity checks and SQL assembly); the SQL
// text and the row decoding stay drizzle's, from the same schema, so the rows are the ones a
// drizzle select returns.
import {
  Column,
  fillPlaceholders,
  getTableColumns,
  getTableName,
  type Query,
  type Table,
} from "drizzle-orm";
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

type ColumnDecoder = { property: string; name: string; decode?: (value: unknown) => unknown };

function columnDecoders(table: Table): ColumnDecoder[] {
  return Object.entries(getTableColumns(table)).map(([property, column]) => ({
    property,
    name: column.name,
    // Most columns store what they hold; only the others (JSON, booleans, dates) are decoded.
    decode:
      column.mapFromDriverValue === Column.prototype.mapFromDriverValue
        ? undefined
        : (value: unknown) => column.mapFromDriverValue(value),
  }));
}

function decodedRow<Row>(columns: ColumnDecoder[], valueAt: (column: number) => unknown): Row {
  const row: Record<string, unknown> = {};
  columns.forEach(({ property, decode }, i) => {
    const value = valueAt(i) ?? null;
    row[property] = value === null || !decode ? value : decode(value);
  });
  return row as Row;
}

/**
 * A select of every column of `table` (as `db.select().from(table)…`), its values given as
 * `sql.placeholder(name)`.
 */
export function preparedSelect<T extends Table>(
  table: T,
  build: (db: Db) => { toSQL(): Query },
): PreparedSelect<T["$inferSelect"]> {
  return { ...preparedStatement(build), rows: rowDecoder(table) };
}

/**
 * The rows of a result that has every column of `table` (under their own names, among any
 * others), decoded as drizzle decodes them.
 */
export function rowDecoder<T extends Table>(table: T): (result: D1Result) => T["$inferSelect"][] {
  const columns = columnDecoders(table);
  return (result) =>
    (result.results as Record<string, unknown>[]).map((raw) =>
      decodedRow(columns, (i) => raw[columns[i].name]),
    );
}

/** Rows of one table carried in a single JSON text column of another table's statement. */
export interface FoldedRows<Row> {
  /** A scalar subquery: the rows matching `where`, as one JSON array of arrays. */
  sql: string;
  /** That column's value back as rows, decoded as drizzle decodes them, sorted by `orderBy`. */
  rows(folded: unknown): Row[];
}

/**
 * Every row of `table` that `where` (SQL, which may name the outer statement's columns)
 * matches, folded into one column of an enclosing statement, so a parent and its children
 * come back in one statement instead of a batch of two. SQLite's JSON writes a REAL with 15
 * significant digits in some versions (local workerd's writes 17), and 15 do not give back
 * every double: REAL columns travel as text of 17 significant digits (`%!.17g`, which always
 * identifies the double) and are read back with Number, so each is the same JS number a
 * select of the column gives, whichever SQLite answers.
 */
export function foldedRows<T extends Table>(
  table: T,
  where: string,
  orderBy: keyof T["$inferSelect"] & string,
): FoldedRows<T["$inferSelect"]> {
  const tableName = getTableName(table);
  const columns = columnDecoders(table);
  const isReal = Object.values(getTableColumns(table)).map((c) => c.getSQLType() === "real");
  const values = Object.values(getTableColumns(table)).map((column, i) => {
    const name = `"${tableName}"."${column.name}"`;
    if (!isReal[i]) return name;
    // A REAL as text; anything else the column holds (NULL, a text) as a one-element array.
    return `iif(typeof(${name}) = 'real', printf('%!.17g', ${name}), json_array(${name}))`;
  });
  const order = columns.findIndex((column) => column.property === orderBy);
  return {
    sql: `(select json_group_array(json_array(${values.join(", ")})) from "${tableName}" where ${where})`,
    rows(folded) {
      if (typeof folded !== "string") return [];
      const tuples = JSON.parse(folded) as unknown[][];
      // The primary key's index gives them in order already; this keeps it so on any plan.
      tuples.sort((a, b) => (a[order] as number) - (b[order] as number));
      return tuples.map((tuple) =>
        decodedRow(columns, (i) => (isReal[i] ? realFromText(tuple[i]) : tuple[i])),
      );
    },
  };
}

/** A REAL column's folded value back to what it holds ("Inf" is how SQLite prints infinity). */
function realFromText(value: unknown): unknown {
  if (typeof value !== "string") return (value as unknown[])[0];
  if (value === "Inf") return Number.POSITIVE_INFINITY;
  if (value === "-Inf") return Number.NEGATIVE_INFINITY;
  return Number(value);
}
