ALTER TABLE `demo_jobs` ADD `attempt_id` text;--> statement-breakpoint
ALTER TABLE `demo_jobs` ADD `lease_expires_at` text;--> statement-breakpoint
ALTER TABLE `frames` ADD `scene_score` real;--> statement-breakpoint
ALTER TABLE `frames` ADD `moved_to` real;--> statement-breakpoint
ALTER TABLE `frames` ADD `moved_reason` text;--> statement-breakpoint
ALTER TABLE `frames` ADD `caption` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `attempt_id` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `lease_expires_at` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `video` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `captions` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `storyboard` text;