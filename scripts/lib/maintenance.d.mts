// Types of maintenance.mjs for the TypeScript tests.
export function readMaintenanceSchedule(options: {
  root: string;
  devVars: string;
  env?: Record<string, string | undefined>;
}): {
  crons: string[];
  leaseSeconds: number;
};
export function parseCron(expression: string): (date: Date) => boolean;
export function nextCronTime(expression: string, after: Date | number): Date;
export function runMaintenance(baseUrl: string, cron: string, time?: number): Promise<void>;
export function scheduleMaintenance(options: {
  baseUrl: string;
  crons: string[];
  leaseSeconds: number;
  log?: (line: string) => void;
}): { first: Promise<void>; stop(): void };
