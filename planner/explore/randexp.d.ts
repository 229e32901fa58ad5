/** randexp 0.6 ships no declarations: the part of its API explore uses (values for a `pattern`). */
declare module 'randexp' {
  export default class RandExp {
    constructor(pattern: string | RegExp, flags?: string);
    /** The repetitions an unbounded `*` or `+` may take (default 100). */
    max: number;
    /** Where its choices come from: replaced with a seeded generator for deterministic samples. */
    randInt(from: number, to: number): number;
    gen(): string;
  }
}
