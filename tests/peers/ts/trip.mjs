// What both TypeScript peer servers (server_v1.mjs, server_v2.mjs) ask and answer for their
// plan_trip tool: one form of every field kind, and the result that echoes what came back.

export const TRIP_FORM = {
    type: 'object',
    properties: {
        travellers: { type: 'integer', title: 'Travellers', minimum: 1, maximum: 9 },
        date: { type: 'string', format: 'date', title: 'Departure date' },
        cabin: {
            type: 'string',
            title: 'Cabin',
            oneOf: [
                { const: 'economy', title: 'Economy' },
                { const: 'business', title: 'Business' },
                { const: 'first', title: 'First class' }
            ]
        },
        window: { type: 'boolean', title: 'Window seat', default: true },
        meal: { type: 'string', title: 'Meal', enum: ['standard', 'vegetarian', 'vegan'], default: 'standard' }
    },
    required: ['travellers', 'date', 'cabin']
};

export const text = value => ({ content: [{ type: 'text', text: value }] });

// Decline and cancel get texts of their own; an accepted form is echoed with the JS type of
// each value, so the test sees what the handler received.
export function tripAnswer(result) {
    if (result.action === 'decline') return text('trip: declined, nothing booked');
    if (result.action === 'cancel') return text('trip: cancelled, ask again later');
    const content = result.content ?? {};
    const types = Object.fromEntries(Object.entries(content).map(([k, v]) => [k, typeof v]));
    return text(JSON.stringify({ content, types }));
}
