return {resources = {}}
