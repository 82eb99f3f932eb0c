CREATE TABLE `api_requests` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`request_id` text NOT NULL,
	`method` text NOT NULL,
	`route` text NOT NULL,
	`status` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `api_requests_account` ON `api_requests` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `api_requests_request_id` ON `api_requests` (`account_id`,`request_id`);--> statement-breakpoint
CREATE INDEX `api_requests_created` ON `api_requests` (`created_at`);