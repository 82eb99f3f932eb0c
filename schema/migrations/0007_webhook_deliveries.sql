CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`job_id` text,
	`url` text NOT NULL,
	`body` text,
	`body_truncated` integer DEFAULT false NOT NULL,
	`attempts` text DEFAULT '[]' NOT NULL,
	`attempts_count` integer DEFAULT 0 NOT NULL,
	`last_status` integer,
	`last_error` text,
	`last_attempt_at` text,
	`delivered_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_account` ON `webhook_deliveries` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created` ON `webhook_deliveries` (`created_at`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `previous_webhook_secret` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `previous_webhook_secret_until` text;