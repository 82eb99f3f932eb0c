CREATE TABLE `batch_items` (
	`batch_id` text NOT NULL,
	`idx` integer NOT NULL,
	`url` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`job_id` text,
	`error` text,
	PRIMARY KEY(`batch_id`, `idx`),
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `batch_items_job` ON `batch_items` (`job_id`);--> statement-breakpoint
CREATE INDEX `batch_items_state` ON `batch_items` (`batch_id`,`state`);--> statement-breakpoint
CREATE TABLE `batches` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`state` text DEFAULT 'active' NOT NULL,
	`options` text NOT NULL,
	`webhook_url` text,
	`item_count` integer NOT NULL,
	`idempotency_key` text,
	`request_hash` text NOT NULL,
	`request_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `batches_account` ON `batches` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `batches_state` ON `batches` (`state`);--> statement-breakpoint
CREATE UNIQUE INDEX `batches_idempotency` ON `batches` (`account_id`,`idempotency_key`);