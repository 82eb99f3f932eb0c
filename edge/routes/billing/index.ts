// Stripe Checkout, the customer portal and Stripe's webhook (issue 8). Being built.
import { createRouter } from "../../app.ts";

export const billingRouter = createRouter();
