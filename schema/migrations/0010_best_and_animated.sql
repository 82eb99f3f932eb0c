ALTER TABLE `demo_jobs` ADD `animated` text;--> statement-breakpoint
ALTER TABLE `frames` ADD `score` real;--> statement-breakpoint
ALTER TABLE `frames` ADD `score_parts` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `animated` text;