/** Records how many candidates survive each pruning stage, in order, for the planner's report. */
export interface StageCount {
  stage: string;
  plans: number;
}

export class Pruning<T> {
  readonly stages: StageCount[] = [];
  private items: T[];

  constructor(stage: string, items: Iterable<T>) {
    this.items = [...items];
    this.stages.push({ stage, plans: this.items.length });
  }

  /** Keeps the candidates for which `keep` holds; the stage is recorded even if it removes none. */
  keep(stage: string, keep: (item: T) => boolean): this {
    this.items = this.items.filter(keep);
    this.stages.push({ stage, plans: this.items.length });
    return this;
  }

  get remaining(): readonly T[] {
    return this.items;
  }
}
