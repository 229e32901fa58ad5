/**
 * How a fault kind is declared: once, as a list of fields, from which come its TypeScript type
 * (`FaultOf`), its validation with kperturb's errors (the file, the path inside it, what was
 * expected: each field reads its value with a `Validator`) and its branch of the TestPlan JSON
 * Schema (`schema`). The registry (./index.ts) collects the kinds; plan validation, `kperturb
 * schema`, the run's arming (src/coordinator/faults/) and sharding all go through it.
 *
 * A small declaration of our own rather than TypeBox or Ajv: kperturb's messages ("a duration in
 * seconds from 0 to 86400 (24 h) (got ...)", "an object key Kind/namespace/name ...", checks across
 * fields such as "a create never gets 409 Conflict") are the product's, and a schema library would
 * need a reader of its errors as large as this file to say them.
 */
import { join, type Validator } from '../validate.js';

export type JsonSchema = Record<string, unknown>;

/** One field of a fault: its JSON Schema and how its value is read from the plan file. */
export interface Field<T, Optional extends boolean = boolean> {
  readonly schema: JsonSchema;
  readonly optional: Optional;
  /** Reads the value at `path`; `before` holds the fields declared before this one, already read (for checks across fields). */
  read(v: Validator, raw: unknown, path: string, before: Readonly<Record<string, unknown>>): T;
}

export type Fields = Record<string, Field<unknown>>;

/** A field the fault must have. */
export function field<T>(
  schema: JsonSchema,
  read: (v: Validator, raw: unknown, path: string, before: Readonly<Record<string, unknown>>) => T,
): Field<T, false> {
  return { schema, optional: false, read };
}

/** A field the fault may leave out (absent from the fault then, not `undefined`). */
export function optional<T>(f: Field<T, false>): Field<T, true> {
  return { ...f, optional: true };
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ValueOf<F> = F extends Field<infer T> ? T : never;

/** The TypeScript type of a fault declared with `type` and `fields`. */
export type FaultFields<Type extends string, S extends Fields> = Simplify<
  { type: Type } & { [K in keyof S as S[K] extends Field<unknown, true> ? never : K]: ValueOf<S[K]> } & {
    [K in keyof S as S[K] extends Field<unknown, true> ? K : never]?: ValueOf<S[K]>;
  }
>;

/** A fault kind: everything the core knows of it. */
export interface FaultKind<F extends { type: string } = { type: string }> {
  readonly type: F['type'];
  /** Its branch of `definitions/fault` in the TestPlan JSON Schema. */
  readonly schema: JsonSchema;
  /** Reads a fault of this type at `path` (its `type` already checked). */
  read(v: Validator, raw: Record<string, unknown>, path: string): F;
  /** What the fault does, in a sentence (run logs, and why a fault was not injected). */
  describe(fault: F): string;
  /** What the fault adds to its workload's run, in ms (sharding weighs plans by it). */
  extraMs(fault: F): number;
  /** Does the fault restart the controller? */
  readonly restarts: boolean;
  /**
   * The part of kperturb's simulated managed system the fault acts through (kubelets, nodes, the
   * volume controller); undefined for a fault of the proxy. The embedded cluster and `--real` run
   * the simulation; a `--kubeconfig` cluster's kubelets and volumes are not kperturb's.
   */
  readonly simulated: string | undefined;
  /**
   * Does the fault act on the managed system (its pods, nodes, volumes, applications) rather than on
   * the controller's view of the cluster or its requests? The controller then sees the world truly,
   * changed by the fault.
   */
  readonly onManagedSystem: boolean;
}

/** The fault type of a kind. */
export type FaultOf<K> = K extends FaultKind<infer F> ? F : never;

export interface FaultDeclaration<Type extends string, S extends Fields> {
  type: Type;
  /** The schema's description of the kind. */
  description: string;
  /** In the order they are read and written. */
  fields: S;
  describe(fault: FaultFields<Type, S>): string;
  /** Default: nothing beyond the workload's run. */
  extraMs?(fault: FaultFields<Type, S>): number;
  /** Default: false. */
  restarts?: boolean;
  /** Default: undefined (a fault of the proxy). */
  simulated?: string;
  /** Default: false (a fault of the proxy, on what the controller sees or sends). */
  onManagedSystem?: boolean;
  /** Checks across fields that no field's reader can make (one that depends on a field being absent); fails with `v.fail`. */
  check?(v: Validator, fault: Readonly<Record<string, unknown>>, path: string): void;
  /** What `check` requires, in JSON Schema (merged into the kind's branch, e.g. an `anyOf` of `required` lists). */
  checkSchema?: JsonSchema;
}

export function declareFault<Type extends string, S extends Fields>(d: FaultDeclaration<Type, S>): FaultKind<FaultFields<Type, S>> {
  const entries = Object.entries(d.fields);
  const allowed = ['type', ...entries.map(([name]) => name)];
  const kind: FaultKind<{ type: Type }> = {
    type: d.type,
    schema: {
      type: 'object',
      properties: { type: { const: d.type }, ...Object.fromEntries(entries.map(([name, f]) => [name, f.schema])) },
      additionalProperties: false,
      required: ['type', ...entries.filter(([, f]) => !f.optional).map(([name]) => name)],
      description: d.description,
      ...d.checkSchema,
    },
    read(v, raw, path) {
      v.onlyKeys(raw, path, allowed);
      const fault: Record<string, unknown> = { type: d.type };
      for (const [name, f] of entries) {
        if (f.optional && raw[name] === undefined) continue;
        fault[name] = f.read(v, raw[name], join(path, name), fault);
      }
      d.check?.(v, fault, path);
      return fault as { type: Type };
    },
    describe: (fault) => d.describe(fault as FaultFields<Type, S>),
    extraMs: (fault) => d.extraMs?.(fault as FaultFields<Type, S>) ?? 0,
    restarts: d.restarts ?? false,
    simulated: d.simulated,
    onManagedSystem: d.onManagedSystem ?? false,
  };
  // What `read` builds field by field is the declared type; the compiler cannot follow the loop.
  return kind as unknown as FaultKind<FaultFields<Type, S>>;
}
