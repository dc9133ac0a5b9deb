"""The Discord platform: discord.py client, slash command tree, message rendering."""
