ALTER TABLE `frames` ADD `captured_at` text;--> statement-breakpoint
ALTER TABLE `frames` ADD `captured_at_source` text;