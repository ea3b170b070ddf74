// The relay's figures as the dashboard shows them; other modules (the spider) add sections.
export interface StatusFigures {
  connections: number;
  subscriptions: number;
  events: number;
  storeBytes: number;
  eventsStored: number;
  eventsRejected: number;
  uptimeSeconds: number;
  /** extra sections (the spider's progress) as label -> value rows */
  sections: Array<{ title: string; rows: Array<[string, string]> }>;
}
