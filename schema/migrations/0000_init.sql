CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`plan` text DEFAULT 'free' NOT NULL,
	`plan_credits` integer DEFAULT 0 NOT NULL,
	`pack_credits` integer DEFAULT 0 NOT NULL,
	`reserved_credits` integer DEFAULT 0 NOT NULL,
	`period_start` text,
	`period_end` text,
	`subscription_status` text,
	`cancel_at_period_end` integer DEFAULT false NOT NULL,
	`webhook_secret` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_email_unique` ON `accounts` (`email`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`hint` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `credit_ledger` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`job_id` text,
	`kind` text NOT NULL,
	`plan_delta` integer DEFAULT 0 NOT NULL,
	`pack_delta` integer DEFAULT 0 NOT NULL,
	`reserved_delta` integer DEFAULT 0 NOT NULL,
	`note` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `credit_ledger_account` ON `credit_ledger` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `demo_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`ip_hash` text NOT NULL,
	`status` text NOT NULL,
	`url` text NOT NULL,
	`source_url` text NOT NULL,
	`platform` text NOT NULL,
	`duration_seconds` real,
	`frames_count` integer,
	`frames_failed` integer DEFAULT 0 NOT NULL,
	`width` integer,
	`height` integer,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`completed_at` text,
	`expires_at` text
);
--> statement-breakpoint
CREATE INDEX `demo_jobs_status_expires` ON `demo_jobs` (`status`,`expires_at`);--> statement-breakpoint
CREATE TABLE `frames` (
	`job_id` text NOT NULL,
	`idx` integer NOT NULL,
	`timestamp` real NOT NULL,
	`pts` real,
	`status` text NOT NULL,
	`r2_key` text,
	`error` text,
	PRIMARY KEY(`job_id`, `idx`)
);
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`job_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`account_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status` text NOT NULL,
	`url` text NOT NULL,
	`source_url` text NOT NULL,
	`platform` text NOT NULL,
	`options` text NOT NULL,
	`webhook_url` text,
	`duration_seconds` real,
	`processed_seconds` real,
	`frames_count` integer,
	`frames_failed` integer DEFAULT 0 NOT NULL,
	`credits_reserved` integer DEFAULT 0 NOT NULL,
	`credits_charged` integer,
	`width` integer,
	`height` integer,
	`zip_key` text,
	`zip_bytes` integer,
	`requested_resolution` integer,
	`delivered_resolution` integer,
	`resolution_note` text,
	`notice` text DEFAULT '' NOT NULL,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`completed_at` text,
	`expires_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `jobs_account_created` ON `jobs` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_status_expires` ON `jobs` (`status`,`expires_at`);--> statement-breakpoint
CREATE TABLE `settlements` (
	`job_id` text PRIMARY KEY NOT NULL,
	`attempt_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
