ALTER TABLE `jobs` ADD `source_key` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `options_key` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `reused_from` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `files_from` text;--> statement-breakpoint
CREATE INDEX `jobs_reuse` ON `jobs` (`account_id`,`options_key`,`source_key`);--> statement-breakpoint
CREATE INDEX `jobs_files_from` ON `jobs` (`files_from`);