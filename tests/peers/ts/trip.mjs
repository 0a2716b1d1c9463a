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

// The profile tool of both servers: every kind of field a form may hold (each string format,
// number, integer, boolean, single choice with and without titles, several choices with and
// without titles) and defaults of each kind the person may leave as they are.
export const PROFILE_FORM = {
    type: 'object',
    properties: {
        email: { type: 'string', format: 'email', title: 'Email' },
        site: { type: 'string', format: 'uri', title: 'Web site' },
        born: { type: 'string', format: 'date', title: 'Birthday' },
        meeting: { type: 'string', format: 'date-time', title: 'First meeting' },
        nickname: { type: 'string', title: 'Nickname', minLength: 2, maxLength: 20, default: 'friend' },
        budget: { type: 'number', title: 'Budget', minimum: 0, maximum: 1000 },
        guests: { type: 'integer', title: 'Guests', minimum: 1, maximum: 9, default: 2 },
        newsletter: { type: 'boolean', title: 'Newsletter', default: false },
        size: { type: 'string', title: 'Size', enum: ['S', 'M', 'L'], default: 'M' },
        seat: {
            type: 'string',
            title: 'Seat',
            oneOf: [
                { const: 'in', title: 'Inside' },
                { const: 'out', title: 'Terrace' }
            ]
        },
        diet: { type: 'array', title: 'Diet', items: { type: 'string', enum: ['veg', 'gf', 'halal'] }, default: ['veg'] },
        extras: {
            type: 'array',
            title: 'Extras',
            minItems: 1,
            maxItems: 2,
            items: {
                anyOf: [
                    { const: 'cake', title: 'A cake' },
                    { const: 'music', title: 'Live music' },
                    { const: 'flowers', title: 'Flowers' }
                ]
            }
        }
    },
    required: ['email', 'site', 'born', 'meeting', 'budget', 'seat', 'extras']
};

// Like tripAnswer, for the profile tool: decline and cancel say so, an accepted form is echoed
// with what the handler received of each value (arrays named as such).
export function profileAnswer(result) {
    if (result.action !== 'accept') return text(`profile: ${result.action}`);
    const content = result.content ?? {};
    const types = Object.fromEntries(
        Object.entries(content).map(([k, v]) => [k, Array.isArray(v) ? `array of ${v.map(x => typeof x).join(',')}` : typeof v])
    );
    return text(JSON.stringify({ content, types }));
}
